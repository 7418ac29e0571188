"""LRU cache of embeddings by exact text: PoG re-embeds the same relation and path strings
across exploration rounds and questions, so repeats are served without touching the model."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kgreason.embed.base import Embedder


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0


class CachedEmbedder:
    """Wraps an `Embedder`; embeds only the distinct misses of a call, in one batch, in order."""

    def __init__(self, inner: Embedder, max_size: int = 100_000) -> None:
        if max_size < 0:
            raise ValueError(f"max_size must be >= 0, got {max_size}")
        self.inner = inner
        self.max_size = max_size
        self.name = inner.name
        self.dim = inner.dim
        self.stats = CacheStats()
        self._store: OrderedDict[str, np.ndarray] = OrderedDict()

    def __len__(self) -> int:
        return len(self._store)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            vec = self._store.get(text)
            if vec is not None:
                self._store.move_to_end(text)
                out[i] = vec
                self.stats.hits += 1
            elif text in missing:
                missing[text].append(i)  # a repeat within this call: embedded once
                self.stats.hits += 1
            else:
                missing[text] = [i]
                self.stats.misses += 1
        if missing:
            fresh = self.inner.embed(list(missing))
            if fresh.shape != (len(missing), self.dim):
                raise ValueError(
                    f"embedder {self.inner.name} returned shape {fresh.shape}, "
                    f"expected {(len(missing), self.dim)}"
                )
            for row, (text, positions) in zip(fresh, missing.items(), strict=True):
                out[positions] = row
                self._put(text, row)
        return out

    def clear(self) -> None:
        self._store.clear()

    def _put(self, text: str, vec: np.ndarray) -> None:
        if self.max_size == 0:
            return
        self._store[text] = np.array(vec, dtype=np.float32)  # a copy: callers may mutate `out`
        self._store.move_to_end(text)
        while len(self._store) > self.max_size:
            self._store.popitem(last=False)
            self.stats.evictions += 1
