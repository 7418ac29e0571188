"""`RankerSelector`: a FuzzySelector whose ranking comes from a path ranker (learned or
zero-shot), so the LLM-free mode and PoG's pruning use it unchanged.

    mode "learned"   the ranker's score alone
    mode "combined"  z-scored ranker score + `weight` * z-scored SBERT cosine (FuzzySelect's)

Combined mode with a transformer embedder and more than `prefilter_top` paths (and more than
the W asked for): the ranker, which scores every path cheaply, keeps its best
max(prefilter_top, W), and only those are embedded, combined (z-scored among themselves) and
ranked. This is `pog.fuzzy_prefilter` for this selector (`prefiltered` reports it, as
FuzzySelector's does); ranking every path (no W) embeds them all.

`answers = True` tells the LLM-free mode to answer with the top path's answer set (see
`answer.py`); a zero-shot ranker leaves it False (its top path is a candidate, not an answer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from kgreason.embed.base import Embedder
from kgreason.pog.fuzzy import (
    FuzzySelector,
    ScoredPath,
    is_transformer,
    path_cosines,
    path_texts,
    top_scores,
)
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
        prefilter_top: int = 0,
        zero_shot: bool = False,
    ):
        super().__init__(embedder)
        self.ranker = ranker
        self.mode = mode
        self.weight = weight
        self.answers = answers
        #: a zero-shot ranking (zeroshot.py, no trained artefact): its answers are labelled
        #: so, and past prefilter_top paths it scores the whole-path similarity's best
        self.zero_shot = zero_shot
        if zero_shot:
            self.prefilter_by = "the zero-shot ranking"
        self.prefilter_top = prefilter_top
        #: the label-free ranker beside the store that `pog.ranker = auto` passed over for
        #: this zero-shot ranking (factory.build_selector decides; describe_ranker names it)
        self.passed_over: Path | None = None
        self._costly = is_transformer(embedder)

    def prefiltered(self, n_paths: int, top: int | None) -> int | None:
        """How many of the ranker's best paths are embedded (combined mode, a transformer
        embedder, more paths than max(prefilter_top, top)), or None (all, or none). A
        zero-shot ranking reads each path's hops in Python, so past `prefilter_top` paths it
        scores only the whole-path similarity's best `prefilter_top` (a 10M hub question's
        20,000 paths: ~50 ms more per question otherwise)."""
        if self.zero_shot and self.mode == "learned":
            return self._zero_shot_cut(n_paths)
        if self.mode != "combined" or not self._costly:
            return None
        return self._cut(n_paths, top)

    def _zero_shot_cut(self, n_paths: int) -> int | None:
        cut = self.prefilter_top
        return cut if self.zero_shot and cut and n_paths > cut else None

    def scored(
        self,
        indicator: str,
        paths: Sequence[ReasoningPath],
        names: Mapping[str, str],
        max_items: int,
        top: int | None,
    ) -> list[ScoredPath]:
        """The ranker's scores (combined: with the cosine's, z-scored)."""
        keep = self._zero_shot_cut(len(paths)) if self.mode == "learned" else None
        if keep is not None:  # the whole-path similarity's best, then the zero-shot ranking
            tree = path_texts(paths, names, max_items)
            cos = path_cosines(self.cache, self.cache.embed([indicator])[0], tree)
            best, _ = top_scores(cos, keep)
            paths = [paths[i] for i in sorted(best.tolist())]
        topics = list(dict.fromkeys(e for p in paths for e in p.entity_list))
        mentions = [names[t] for t in topics if t in names]
        s = np.asarray(self.ranker.score(indicator, mentions, paths, topics), np.float64)
        order = np.lexsort((np.arange(len(s)), -s))
        if self.mode == "combined":
            keep = self.prefiltered(len(paths), top)
            idx = np.arange(len(paths)) if keep is None else np.sort(order[:keep])
            sub = [paths[i] for i in idx.tolist()]
            cos = np.zeros(len(sub))
            where = {id(p): i for i, p in enumerate(sub)}
            # (no top: FuzzySelector.rank embeds every path of `sub`)
            for sp in super().scored(indicator, sub, names, max_items, None) if sub else []:
                cos[where[id(sp.path)]] = sp.score
            comb = _z(s[idx]) + self.weight * _z(cos)
            s = s.copy()
            s[idx] = comb
            order = idx[np.lexsort((idx, -comb))]  # at least the `top` asked for
        order = order[: len(s) if top is None else top]
        return [
            ScoredPath(
                paths[i],
                float(s[i]),
                render_path(paths[i], names, max_items=max_items, with_ids=False),
            )
            for i in order
        ]
