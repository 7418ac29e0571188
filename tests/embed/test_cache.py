from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from kgreason.embed.cache import CachedEmbedder


class Recording:
    """Forwards to a real embedder and records every batch it is asked for."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed(texts)


def test_hits_misses_order_and_one_batch(static):
    rec = Recording(static)
    cache = CachedEmbedder(rec, max_size=100)
    first = cache.embed(["a b", "c d", "a b", "e f"])
    assert rec.calls == [["a b", "c d", "e f"]]  # distinct misses, one batch, first-seen order
    assert (cache.stats.hits, cache.stats.misses) == (1, 3)
    np.testing.assert_array_equal(first, static.embed(["a b", "c d", "a b", "e f"]))

    second = cache.embed(["e f", "g h", "a b"])
    assert rec.calls[-1] == ["g h"]
    assert (cache.stats.hits, cache.stats.misses) == (3, 4)
    np.testing.assert_array_equal(second, static.embed(["e f", "g h", "a b"]))
    assert second.dtype == np.float32 and second.shape == (3, static.dim)


def test_all_hits_do_not_call_inner(static):
    rec = Recording(static)
    cache = CachedEmbedder(rec)
    cache.embed(["x y"])
    cache.embed(["x y", "x y"])
    assert len(rec.calls) == 1
    assert cache.embed([]).shape == (0, static.dim)
    assert len(rec.calls) == 1


def test_lru_eviction(static):
    rec = Recording(static)
    cache = CachedEmbedder(rec, max_size=2)
    cache.embed(["one", "two"])
    cache.embed(["one"])  # "one" becomes most recent; "two" is next to go
    cache.embed(["three"])
    assert len(cache) == 2 and cache.stats.evictions == 1
    cache.embed(["one", "two"])
    assert rec.calls[-1] == ["two"]


def test_cached_vectors_are_not_aliased(static):
    cache = CachedEmbedder(Recording(static))
    out = cache.embed(["film"])
    out[:] = 0
    assert np.linalg.norm(cache.embed(["film"])[0]) == pytest.approx(1.0, abs=1e-5)


def test_size_zero_disables_storage(static):
    rec = Recording(static)
    cache = CachedEmbedder(rec, max_size=0)
    cache.embed(["a"])
    cache.embed(["a"])
    assert len(rec.calls) == 2 and len(cache) == 0


def test_wrong_shape_from_inner_is_an_error(static):
    class Broken(Recording):
        def embed(self, texts):
            return np.zeros((len(texts) + 1, self.dim), dtype=np.float32)

    with pytest.raises(ValueError, match="returned shape"):
        CachedEmbedder(Broken(static)).embed(["a"])
    with pytest.raises(ValueError, match="max_size"):
        CachedEmbedder(static, max_size=-1)
