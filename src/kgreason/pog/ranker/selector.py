"""`RankerSelector`: a FuzzySelector whose ranking comes from a path ranker (learned or
zero-shot), so the LLM-free mode and PoG's pruning use it unchanged.

    mode "learned"   the ranker's score alone
    mode "combined"  z-scored ranker score + `weight` * z-scored SBERT cosine (FuzzySelect's)

`answers = True` tells the LLM-free mode to answer with the top path's answer set (see
`answer.py`); a zero-shot ranker leaves it False (its top path is a candidate, not an answer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Protocol

import numpy as np

from kgreason.embed.base import Embedder
from kgreason.pog.fuzzy import EMBED_MAX_ITEMS, FuzzySelector, ScoredPath
from kgreason.pog.render import render_path
from kgreason.pog.types import ReasoningPath


class PathScorer(Protocol):
    def score(
        self,
        question: str,
        mentions: Sequence[str],
        paths: Sequence[ReasoningPath],
        topics: Sequence[str],
    ) -> np.ndarray: ...


def _z(x: np.ndarray) -> np.ndarray:
    return (x - x.mean()) / (x.std() + 1e-6) if len(x) > 1 else x * 0


class RankerSelector(FuzzySelector):
    learned = True

    def __init__(
        self,
        ranker: PathScorer,
        embedder: Embedder,
        *,
        mode: Literal["learned", "combined"] = "learned",
        weight: float = 0.5,
        answers: bool = True,
    ):
        super().__init__(embedder)
        self.ranker = ranker
        self.mode = mode
        self.weight = weight
        self.answers = answers

    def rank(
        self,
        indicator: str,
        paths: Sequence[ReasoningPath],
        names: Mapping[str, str],
        *,
        max_items: int = EMBED_MAX_ITEMS,
        top: int | None = None,
    ) -> list[ScoredPath]:
        if not paths:
            return []
        topics = list(dict.fromkeys(e for p in paths for e in p.entity_list))
        mentions = [names[t] for t in topics if t in names]
        s = np.asarray(self.ranker.score(indicator, mentions, paths, topics), np.float64)
        if self.mode == "combined":
            cos = np.zeros(len(paths))
            where = {id(p): i for i, p in enumerate(paths)}
            for sp in super().rank(indicator, paths, names, max_items=max_items):
                cos[where[id(sp.path)]] = sp.score
            s = _z(s) + self.weight * _z(cos)
        order = np.lexsort((np.arange(len(s)), -s))[: len(s) if top is None else top]
        return [
            ScoredPath(
                paths[i],
                float(s[i]),
                render_path(paths[i], names, max_items=max_items, with_ids=False),
            )
            for i in order
        ]
