"""Zero-shot ranking for KGs with no training data: hop-aligned similarity.

Whole-path string similarity embeds "{Film} -> directed_by -> {A, B} -> ..." as one text, so
entity names drown the relations and every hop counts once at best. Here each hop's relation
text is aligned with the question instead, both ways (as BERTScore aligns tokens):
    hop -> question:  mean over hops of max over question words cos(word, relation)
    question -> hop:  mean over the question's content words of max over hops cos(word, rel)
plus whole-question similarity per hop, minus a small per-hop length penalty.
Only the embedder is needed (words and relation texts are embedded once and cached).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from kgreason.embed.base import Embedder
from kgreason.pog.ranker.align import cached_vectors
from kgreason.pog.ranker.calibration import ORDER_ALIGNED, Calibration
from kgreason.pog.ranker.features import mask_question, path_keys, relation_text
from kgreason.pog.ranker.order import order_alignment, question_phrases, reading_key
from kgreason.pog.ranker.words import STOPWORDS, content_words
from kgreason.pog.types import ReasoningPath


@dataclass
class HopAlignedRanker:
    embedder: Embedder
    length_penalty: float = 0.02
    _vec: dict[str, np.ndarray] = field(default_factory=dict)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return cached_vectors(self.embedder.embed, self._vec, texts, as_unit=False)

    def score(
        self,
        question: str,
        mentions: Sequence[str],
        paths: Sequence[ReasoningPath],
        topics: Sequence[str] = (),
    ) -> np.ndarray:
        if not paths:
            return np.zeros(0, np.float32)
        masked = mask_question(question, mentions)
        words = content_words(masked) or [masked]
        qv = np.asarray(self.embedder.embed([masked]), dtype=np.float32)[0]
        wv = self._embed(words)
        rels = sorted({r for p in paths for r, _ in path_keys(p)})
        rv = self._embed([relation_text(r) for r in rels])
        row = {r: i for i, r in enumerate(rels)}
        sim = wv @ rv.T  # (words, relations)
        qsim = rv @ qv
        out = np.empty(len(paths), np.float32)
        for i, p in enumerate(paths):
            idx = [row[r] for r, _ in path_keys(p)]
            s = sim[:, idx]
            out[i] = (
                s.max(0).mean()
                + s.max(1).mean()
                + qsim[idx].mean()
                - self.length_penalty * (len(idx) - 1)
            )
        return out


@dataclass
class OrderAlignedRanker:
    """Zero-shot, order-aware: the question's relation phrases in the hop order its English
    implies (order.py), aligned monotonically with each path's hops; plus `qsim_weight` x
    the mean whole-question similarity of the hops (a tie-break between paths that align
    alike). The weights were chosen on PathQuestion questions 300-600 of each file, with the
    static and the MiniLM encoder (docs/ranker.md); the figures reported are on 0-300."""

    embedder: Embedder
    #: a matched hop gains sim - tau; a hop matched to nothing costs tau
    tau: float = 0.1
    #: a question word no hop answers costs rho. 0.2, re-chosen on the same slice once paths
    #: could revisit (pog.revisit_when_empty): 0.1 then left "what does [X] 's dad do for a
    #: living" at the 1-hop `parents`, "living" unanswered; 0.2-0.25 is a plateau there
    #: (docs/ranker.md, tests/pog/test_ranker_length.py)
    rho: float = 0.2
    #: a hop that can only be read backwards costs beta
    beta: float = 0.5
    qsim_weight: float = 0.5
    #: tau above the median word-relation similarity of the question (order_alignment)
    adaptive: bool = True
    _vec: dict[str, np.ndarray] = field(default_factory=dict)
    #: what its answer's confidence is (its scores are no logits): calibration.py
    calibration: ClassVar[Calibration] = ORDER_ALIGNED

    def _unit(self, texts: Sequence[str]) -> np.ndarray:
        return cached_vectors(self.embedder.embed, self._vec, texts)

    def score(
        self,
        question: str,
        mentions: Sequence[str],
        paths: Sequence[ReasoningPath],
        topics: Sequence[str] = (),
    ) -> np.ndarray:
        if not paths:
            return np.zeros(0, np.float32)
        masked = mask_question(question, mentions)
        phrases, known = question_phrases(masked, STOPWORDS)
        rel, sign, texts = hop_readings(paths)
        score = order_alignment(
            phrases,
            known,
            self._unit,
            rel,
            sign,
            texts,
            tau=self.tau,
            rho=self.rho,
            beta=self.beta,
            adaptive=self.adaptive,
        )
        # tie-break: mean whole-question similarity of the hops' relation texts
        qsim = self._unit(texts) @ self._unit([masked])[0]
        tie = np.where(rel >= 0, qsim[np.maximum(rel, 0)], 0.0).sum(1) / np.maximum(
            (rel >= 0).sum(1), 1
        )
        return (score + self.qsim_weight * tie).astype(np.float32)


def hop_readings(paths: Sequence[ReasoningPath]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(rel, sign, texts) of order.order_alignment: each hop's forward reading
    (order.reading_keys) as an index into `texts` (-1 past a path's end) and +1/-1.
    Read once per distinct hop object and relation: a 10M hub question's 9,000-20,000
    paths share their prefixes' hops, and reading every hop of every path, each relation's
    text made anew, took ~110 ms under the profiler."""
    vocab: dict[str, int] = {}
    text_of: dict[str, int] = {}
    read_of: dict[int, tuple[int, float]] = {}
    k_max = max(len(p.hops) for p in paths)
    rel = np.full((len(paths), k_max), -1, np.int64)
    sign = np.zeros((len(paths), k_max), np.float32)
    for i, p in enumerate(paths):
        for k, h in enumerate(p.hops):
            got = read_of.get(id(h))
            if got is None:
                r, fwd = reading_key(h)
                j = text_of.get(r)
                if j is None:
                    j = text_of[r] = vocab.setdefault(relation_text(r), len(vocab))
                got = read_of[id(h)] = (j, 1.0 if fwd else -1.0)
            rel[i, k], sign[i, k] = got
    return rel, sign, sorted(vocab, key=vocab.__getitem__)
