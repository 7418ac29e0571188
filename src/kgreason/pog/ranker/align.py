"""Word-to-hop alignment scalars: ranker features that carry across KGs.

The bilinear features (features.py) learn which question words ask for which relation words;
on a KG whose relations training never saw, that knowledge is only as good as the embedder's
neighbourhoods. These scalars are tied to no vocabulary at all. With the question's content
words w (topic masked) and the path's relation texts r (hop slots, as the bilinear part
sees them), both embedded and unit-normalised, and sim = cos(w, r):

    align_hop_mean   mean over hops of max over words of sim  (every hop is asked for)
    align_hop_min    min over hops of the same               (no hop left unasked for)
    align_word_cov   mean over words of max over hops of sim  (every word is answered)
    align_assign     hops matched to DISTINCT words greedily, the matched sims summed and
                     divided by max(words, hops): a one-to-one alignment score, so a third
                     hop that re-uses the word the second matched ("nationality" ->
                     nationality, back along nationality) costs, and so does a word no hop
                     answers ("the faith of [X] 's parent": parents alone scores half)
    repeat_relation  hops whose relation already appears earlier in the slots
    word_count       the question's content words (with the hop count: one relation word
                     per hop is how most questions ask)

They describe how well a path's hops and the question's words pair up, so a ranker trained
on one KG's questions (or on questions generated from the user's own KG, synth.py) can use
them on another's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

ALIGN_SCALARS = (
    "align_hop_mean",
    "align_hop_min",
    "align_word_cov",
    "align_assign",
    "repeat_relation",
    "word_count",
)


def unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)


def cached_vectors(
    embed: Callable[[list[str]], np.ndarray],
    cache: dict[str, np.ndarray],
    texts: Sequence[str],
    *,
    as_unit: bool = True,
) -> np.ndarray:
    """The texts' vectors (unit length when `as_unit`), each embedded once into `cache`."""
    todo = [t for t in dict.fromkeys(texts) if t not in cache]
    if todo:
        got = np.asarray(embed(todo))
        cache.update(zip(todo, unit(got) if as_unit else got, strict=True))
    if not texts:
        return np.zeros((0, 1), np.float32 if as_unit else np.float64)
    return np.vstack([cache[t] for t in texts])


def align_scalars(words: np.ndarray, relvec: np.ndarray, rel: np.ndarray) -> np.ndarray:
    """(n, len(ALIGN_SCALARS)) for the paths of ONE question.
    words: (W, d) unit vectors of its content words (W may be 0); relvec: (V, d) unit
    relation-text vectors; rel: (n, slots) relation index per hop slot (-1 = empty)."""
    n, slots = rel.shape
    out = np.zeros((n, len(ALIGN_SCALARS)), np.float32)
    if n == 0:
        return out
    present = rel >= 0
    n_hops = np.maximum(present.sum(1), 1)
    same = (rel[:, :, None] == rel[:, None, :]) & present[:, :, None] & present[:, None, :]
    earlier = np.tril(np.ones((slots, slots), bool), -1)
    out[:, 4] = (same & earlier[None]).any(2).sum(1)
    out[:, 5] = len(words)
    if len(words) == 0:
        return out
    sim = np.einsum("wd,nsd->nws", words, relvec[np.maximum(rel, 0)])  # (n, W, slots)
    sim = np.where(present[:, None, :], sim, -np.inf)
    hop_best = sim.max(1)  # (n, slots)
    hop_ok = np.where(present, hop_best, 0.0)
    out[:, 0] = hop_ok.sum(1) / n_hops
    out[:, 1] = np.where(present, hop_best, np.inf).min(1)
    out[:, 1] = np.where(np.isfinite(out[:, 1]), out[:, 1], 0.0)
    out[:, 2] = np.where(present.any(1), sim.max(2).mean(1), 0.0)
    out[:, 3] = _assign(sim, present) / np.maximum(n_hops, len(words))
    return out


def _assign(sim: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Greedy one-to-one matching of hops to words: per path, the sum of matched sims."""
    n, w, slots = sim.shape
    s = sim.copy()
    total = np.zeros(n, np.float32)
    rows = np.arange(n)
    for _ in range(min(w, slots)):
        flat = s.reshape(n, -1)
        j = flat.argmax(1)
        best = flat[rows, j]
        ok = np.isfinite(best)
        total += np.where(ok, best, 0.0)
        wi, si = np.divmod(j, slots)
        s[rows, wi, :] = -np.inf
        s[rows, :, si] = -np.inf
    return total


_OPAQUE = re.compile(r"[a-z]{0,2}\d+|.{0,2}")


def opaque(relation_text: str) -> bool:
    """A relation name that says nothing in words ("P57", "p1", "r2"): no alignment."""
    return _OPAQUE.fullmatch(relation_text.strip().lower()) is not None


def path_alignment(
    question: str,
    mentions: Sequence[str],
    path_keys: Sequence[tuple[str, bool]],
    vectors: Callable[[Sequence[str]], np.ndarray],
) -> float | None:
    """`align_assign` of one path: how well its hops and the question's content words pair
    up, one to one (0 when the question has no content word). The LLM-free mode's
    abstention signal (answer.py): an out-of-KG question ("what is the capital of
    [France]") links to something, but no path's relations are what it asks for. None when
    a hop's relation name is opaque (Wikidata's "P57"): words cannot be matched to it, and
    only a ranker trained on the KG knows what it means. `vectors` maps texts to unit
    vectors (PathRanker.unit_vectors: the ranker's embedder and its cache)."""
    got = path_scalars(question, mentions, path_keys, vectors)
    return None if got is None else got["align_assign"]


def path_scalars(
    question: str,
    mentions: Sequence[str],
    path_keys: Sequence[tuple[str, bool]],
    vectors: Callable[[Sequence[str]], np.ndarray],
) -> dict[str, float] | None:
    """Every ALIGN_SCALARS value of one path, and `align_word_min` (the least answered
    content word's best similarity with a hop: an out-of-KG question's key word, "height",
    "budget", matches no relation of the path however well the rest do); all 0 when the
    question has no content word or the path no hop. None when a relation name is opaque
    (path_alignment)."""
    from kgreason.pog.ranker.features import encode_slots, mask_question, relation_text
    from kgreason.pog.ranker.words import content_words

    if any(opaque(relation_text(r)) for r, _ in path_keys):
        return None
    words = content_words(mask_question(question, mentions))
    out = dict.fromkeys((*ALIGN_SCALARS, "align_word_min"), 0.0)
    if not words or not path_keys:
        return out
    vocab: dict[str, int] = {}
    rel, _ = encode_slots([tuple(path_keys)], vocab)
    rels = sorted(vocab, key=vocab.__getitem__)
    rv = vectors([relation_text(r) for r in rels])
    wv = vectors(words)
    out.update(zip(ALIGN_SCALARS, map(float, align_scalars(wv, rv, rel)[0]), strict=True))
    out["align_word_min"] = float((wv @ rv[rel[0][rel[0] >= 0]].T).max(1).min())
    return out
