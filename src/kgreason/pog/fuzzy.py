"""FuzzySelect (section 4.3, Algorithm 2): rank paths by the cosine similarity between the
indicator (I_LLM / I_Sup; the question itself in LLM-free mode) and each path's text, keep
the top W.

Path texts for embedding are rendered WITHOUT ids (ids are noise to a sentence embedder)
and with sets shortened to their first EMBED_MAX_ITEMS members plus "(+N more)". Embeddings are cached by text: the same path text
recurs across depths and phases of a question, and across questions on a shared hub.
Ties keep the input order (cosine_topk breaks ties by index).

API:
    EmbeddingCache(embedder, max_items=100_000).embed(texts) -> np.ndarray (n, dim)
    FuzzySelector(embedder_or_cache)
        .rank(indicator, paths, names, *, max_items=...) -> list[ScoredPath]  (all, best first)
        .select(indicator, paths, names, w, *, max_items=...) -> list[ReasoningPath]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kgreason.embed.base import Embedder, cosine_topk
from kgreason.embed.cache import CachedEmbedder
from kgreason.pog.render import render_path
from kgreason.pog.types import ReasoningPath

#: set members shown in an embedded path text: relation names carry most of the similarity,
#: and short texts keep SentenceBERT fast (its cost grows with text length)
EMBED_MAX_ITEMS = 4


class EmbeddingCache:
    """Text -> unit vector, bounded LRU; misses are embedded in one batch."""

    def __init__(self, embedder: Embedder, max_items: int = 100_000):
        self.embedder = embedder
        self.max_items = max_items
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        self.misses += len(todo)
        self.hits += len(texts) - len(todo)
        if todo:
            vecs = np.asarray(self.embedder.embed(todo), dtype=np.float32)
            for t, v in zip(todo, vecs, strict=True):
                self._cache[t] = v
            while len(self._cache) > self.max_items:
                self._cache.popitem(last=False)
        rows = []
        for t in texts:
            v = self._cache.get(t)
            if v is None:  # evicted within this call (cache smaller than the batch)
                v = np.asarray(self.embedder.embed([t]), dtype=np.float32)[0]
            else:
                self._cache.move_to_end(t)
            rows.append(v)
        if not rows:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.vstack(rows).astype(np.float32)


@dataclass(frozen=True)
class ScoredPath:
    path: ReasoningPath
    score: float
    text: str


class FuzzySelector:
    """`embedder` is used as is when it already caches (EmbeddingCache or the embed
    package's CachedEmbedder, which `build_embedder` returns); otherwise it is wrapped."""

    def __init__(self, embedder: Embedder | EmbeddingCache):
        self.cache: Embedder | EmbeddingCache = (
            embedder
            if isinstance(embedder, EmbeddingCache | CachedEmbedder)
            else EmbeddingCache(embedder)
        )

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
        texts = [render_path(p, names, max_items=max_items, with_ids=False) for p in paths]
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
