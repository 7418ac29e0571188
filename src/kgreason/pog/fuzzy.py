"""FuzzySelect (section 4.3, Algorithm 2): rank paths by the cosine similarity between the
indicator (I_LLM / I_Sup; the question itself in LLM-free mode) and each path's text, keep
the top W.

Path texts for embedding are rendered WITHOUT ids (ids are noise to a sentence embedder)
and with sets shortened to their first EMBED_MAX_ITEMS members plus "(+N more)". Embeddings are
cached by text (the embed package's one LRU, `CachedEmbedder`): the same path text recurs
across depths and phases of a question, and across questions on a shared hub.
Ties keep the input order (cosine_topk breaks ties by index).

API:
    FuzzySelector(embedder)  (wrapped in a CachedEmbedder unless it is one)
        .rank(indicator, paths, names, *, max_items=...) -> list[ScoredPath]  (all, best first)
        .select(indicator, paths, names, w, *, max_items=...) -> list[ReasoningPath]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kgreason.embed.base import Embedder, cosine_topk
from kgreason.embed.cache import CachedEmbedder
from kgreason.pog.render import render_paths
from kgreason.pog.types import ReasoningPath

#: set members shown in an embedded path text: relation names carry most of the similarity,
#: and short texts keep SentenceBERT fast (its cost grows with text length)
EMBED_MAX_ITEMS = 4


@dataclass(frozen=True)
class ScoredPath:
    path: ReasoningPath
    score: float
    text: str


class FuzzySelector:
    """`embedder` is used as is when it already caches (a CachedEmbedder, which
    `build_embedder` returns); otherwise it is wrapped in one."""

    #: a trained ranker (pog/ranker) masks `[mentions]` itself and already scores length
    learned: bool = False
    #: the LLM-free mode answers with the top path's end set (not only candidates)
    answers: bool = False

    def __init__(self, embedder: Embedder):
        self.cache = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(embedder)

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
        texts = render_paths(paths, names, max_items=max_items, with_ids=False)
        q = self.cache.embed([indicator])[0]
        m = self.cache.embed(texts)
        idx, scores = cosine_topk(q, m, len(paths) if top is None else top)
        return [ScoredPath(paths[i], float(s), texts[i]) for i, s in zip(idx, scores, strict=True)]

    def select(
        self,
        indicator: str,
        paths: Sequence[ReasoningPath],
        names: Mapping[str, str],
        w: int,
        *,
        max_items: int = EMBED_MAX_ITEMS,
    ) -> list[ReasoningPath]:
        if len(paths) <= w:
            # still ranked, so callers get the best first
            return [s.path for s in self.rank(indicator, paths, names, max_items=max_items)]
        return [s.path for s in self.rank(indicator, paths, names, max_items=max_items, top=w)]
