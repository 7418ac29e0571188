"""Features of (question with its topic mention masked, relation path), numpy only.

A path is read hop by hop: each hop's relation name becomes text ("directed_by" ->
"directed by"; Freebase/PathQuestion prefixes dropped) and is embedded once per relation.
Slots: hop 1, hop 2, and the LAST hop when the path has 3 or more (middle hops of longer
multi-entity paths are not seen). Per slot, with q the question vector and r the relation
vector (both projected by the artefact's PCA to k dims) and s = +1 forward / -1 backward:
    outer(q, r) (k*k), s*outer(q, r), r, s*r, [present, s, cos(q,r), s*cos(q,r)]
so even a linear model is bilinear in (question, relation text): it learns which question
words ask for which relation words, per hop position and direction, and carries over to
relations never seen in training through their text. Then q itself and structural scalars. The same function builds training and ask-time
rows, so the two cannot drift apart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from kgreason.pog.types import ReasoningPath

N_SLOTS = 3
SCALARS = (
    "len1",
    "len2",
    "len3",
    "len4+",
    "log_end_set",
    "log_hub",
    "joins_all_topics",
    "multi_topic",
)
_BRACKET = re.compile(r"\[[^\[\]]*\]")
MASK = "X"

Key = tuple[str, bool]


def relation_text(relation: str) -> str:
    """Readable text of a relation id: last segment of a dotted/`__` path, `_` -> space."""
    rel = relation.rsplit("/", 1)[-1]
    parts = [p for p in re.split(r"\.|__", rel) if p]
    return (parts[-1] if parts else rel).replace("_", " ").strip() or relation


def mask_question(question: str, mentions: Sequence[str] = ()) -> str:
    """Replace `[mention]`s and the given topic names/keywords with a placeholder, so the
    ranker learns how questions ask, not which entity they ask about."""
    out = _BRACKET.sub(MASK, question)
    for m in sorted({m for m in mentions if m and m.strip()}, key=len, reverse=True):
        out = re.sub(re.escape(m), MASK, out, flags=re.IGNORECASE)
    return out


def path_keys(path: ReasoningPath) -> tuple[Key, ...]:
    return tuple((h.relation, h.forward) for h in path.hops)


def slot_hops(n: int) -> list[int]:
    """Hop index per slot (-1 = empty): first, second, last (when n >= 3)."""
    return [0 if n >= 1 else -1, 1 if n >= 2 else -1, n - 1 if n >= 3 else -1]


def path_scalars(path: ReasoningPath, answer_size: int, n_topics: int) -> np.ndarray:
    n = path.length
    hub = max([len(h.side(True)) for h in path.hops] + [1])  # (Hop.side: no name decoded)
    joins = n_topics > 1 and len(set(path.entity_list)) >= n_topics
    return np.array(
        [
            n == 1,
            n == 2,
            n == 3,
            n >= 4,
            math.log1p(answer_size),
            math.log1p(hub),
            joins,
            n_topics > 1,
        ],
        dtype=np.float32,
    )


def encode_slots(
    keys: Sequence[tuple[Key, ...]], vocab: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """(n, N_SLOTS) relation index into `vocab` (-1 empty) and sign (+1/-1, 0 empty).
    `vocab` maps a relation to the row of its text vector; unseen relations are added
    (callers embed the new relation texts)."""
    rel = np.full((len(keys), N_SLOTS), -1, dtype=np.int64)
    sign = np.zeros((len(keys), N_SLOTS), dtype=np.float32)
    for i, ks in enumerate(keys):
        for s, j in enumerate(slot_hops(len(ks))):
            if j < 0:
                continue
            r, fwd = ks[j]
            rel[i, s] = vocab.setdefault(r, len(vocab))
            sign[i, s] = 1.0 if fwd else -1.0
    return rel, sign


def n_features(dim: int, n_scalars: int = len(SCALARS)) -> int:
    return dim + N_SLOTS * (2 * dim * dim + 2 * dim + 4) + n_scalars


def build_rows(
    q: np.ndarray, rel: np.ndarray, sign: np.ndarray, scalars: np.ndarray, relvec: np.ndarray
) -> np.ndarray:
    """Feature rows. q: (n, k) question vectors (one per row); rel/sign: (n, N_SLOTS);
    scalars: (n, len(SCALARS)); relvec: (V, k) relation vectors (same projection as q)."""
    blocks = [q]
    small = []
    for s in range(N_SLOTS):
        present = (rel[:, s] >= 0).astype(np.float32)[:, None]
        r = relvec[np.maximum(rel[:, s], 0)] * present
        sg = sign[:, s : s + 1]
        outer = (q[:, :, None] * r[:, None, :]).reshape(len(q), -1)
        cos = (q * r).sum(1, keepdims=True)
        blocks += [outer, sg * outer, r, sg * r]
        small += [present, sg, cos, sg * cos]
    return np.concatenate([*blocks, *small, scalars], axis=1).astype(np.float32, copy=False)
