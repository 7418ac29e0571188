"""pog/kernels/paths: the compiled membership loop of fastrestrict.kept_members gives
exactly its numpy form's and a plain set lookup's answer on random inputs."""

from __future__ import annotations

import numpy as np
import pytest

from kgreason.pog.arrays.kernels import paths

numba = pytest.importorskip("numba", reason="numba not installed: the numpy forms are tested")


def _inputs(rng: np.random.Generator, n: int, n_pairs: int):
    """Sorted runs in a pool, ranges of them per pair in any order (some pairs without a
    range, some ranges empty), queries of every pair (some pairs without a query)."""
    runs = [np.unique(rng.integers(0, n, rng.integers(0, 30))) for _ in range(120)]
    pool = np.concatenate(runs).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum([len(r) for r in runs])[:-1]]).astype(np.int64)
    lens = np.array([len(r) for r in runs], dtype=np.int64)
    pick = rng.integers(0, len(runs), int(rng.integers(0, 3 * n_pairs)))
    rd = rng.integers(0, n_pairs, len(pick)).astype(np.int64)
    rlo, rk = starts[pick], lens[pick]
    qd = rng.integers(0, n_pairs, int(rng.integers(1, 40 * n_pairs))).astype(np.int64)
    qn = rng.integers(0, n, len(qd)).astype(np.int64)
    return qd, qn, rd, rlo, rk, pool


def _plain(qd, qn, rd, rlo, rk, pool, n_pairs):
    near = [set() for _ in range(n_pairs)]
    for d, lo, k in zip(rd.tolist(), rlo.tolist(), rk.tolist(), strict=True):
        near[d].update(pool[lo : lo + k].tolist())
    return [x in near[d] for d, x in zip(qd.tolist(), qn.tolist(), strict=True)]


@pytest.mark.parametrize("seed", range(8))
def test_near_members_compiled_equals_numpy_and_a_plain_lookup(seed):
    rng = np.random.default_rng(seed)
    n, n_pairs = int(rng.integers(5, 400)), int(rng.integers(1, 30))
    args = _inputs(rng, n, n_pairs)
    want = _plain(*args, n_pairs)
    assert 0 < sum(want) < len(want) or len(want) < 20  # both outcomes on most seeds
    for jit in (False, True):
        got = paths.near_members(*args, n_pairs, n, jit=jit)
        assert got.dtype == bool
        assert got.tolist() == want


def test_near_members_without_rows_or_queries():
    z = np.zeros(0, dtype=np.int64)
    q = np.array([0, 1], dtype=np.int64)
    for jit in (False, True):
        assert paths.near_members(q, q, z, z, z, z, 2, 2, jit=jit).tolist() == [False, False]
        assert paths.near_members(z, z, q, q, q, q, 2, 2, jit=jit).tolist() == []


def test_size_threshold_and_switch(monkeypatch):
    monkeypatch.delenv("KGREASON_JIT", raising=False)
    calls = []
    real = paths._near_numpy
    monkeypatch.setattr(paths, "_near_numpy", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(1)
    args = _inputs(rng, 50, 4)
    paths.near_members(*args, 4, 50)  # small: numpy
    assert calls == [1]
    monkeypatch.setattr(paths, "MIN_ROWS", 0)
    paths.near_members(*args, 4, 50)  # large: compiled
    assert calls == [1]
    monkeypatch.setenv("KGREASON_JIT", "0")
    paths.near_members(*args, 4, 50)
    assert calls == [1, 1]


def test_warm_inputs():
    assert paths.warm_inputs()
