"""The embedding interface used by PoG's fuzzy selection, entity linking and LKG retrieval."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Maps a batch of texts to a unit-normalised float32 matrix of shape (n, dim)."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def cosine_topk(query: np.ndarray, matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the k rows of `matrix` most similar to `query`, best first.

    Rows are assumed unit-normalised (as every `Embedder` returns), so cosine is a dot
    product. Ties are broken by row index, so the order is deterministic.
    """
    if matrix.shape[0] == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    scores = matrix @ query.reshape(-1).astype(np.float32)
    k = min(k, scores.shape[0])
    # lexsort: primary key -score, secondary key index (stable, deterministic)
    order = np.lexsort((np.arange(scores.shape[0]), -scores))[:k]
    return order.astype(np.int64), scores[order].astype(np.float32)
