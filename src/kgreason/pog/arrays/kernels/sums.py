"""Sums of a per-node value over ranges of a node array (the edge rows a level of partial
paths would read, from the steps that make it, before the level is built).

Why: the segment search checks each level against max_level_rows before reading it. Most
two-topic 10M questions stop there, after building a level of up to max_paths sets (copying
~2M nodes, making their hop groups) only to sum their degrees. Summing from the steps first
lets a level that is too big never be built; the loop reads each node once, where numpy
gathers it twice (the ranges, then the values).
"""

from __future__ import annotations

import numpy as np

from kgreason.jit import compiled, use_jit
from kgreason.kg.store.build_index import ranges

#: summed elements below which numpy is used
MIN_ROWS = 100_000


def _range_sums_loop(values, nodes, a, ln):  # pragma: no cover (compiled)
    out = np.zeros(len(a), dtype=np.int64)
    for k in range(len(a)):
        acc = 0
        for j in range(a[k], a[k] + ln[k]):
            acc += values[nodes[j]]
        out[k] = acc
    return out


def _holding_loop(pool, a, ln, t):  # pragma: no cover (compiled)
    out = np.zeros(len(a), dtype=np.bool_)
    for k in range(len(a)):
        lo = a[k]
        hi = a[k] + ln[k]
        while lo < hi:  # binary search: each set is sorted
            mid = (lo + hi) >> 1
            if pool[mid] < t:
                lo = mid + 1
            else:
                hi = mid
        out[k] = lo < a[k] + ln[k] and pool[lo] == t
    return out


LOOPS = [
    (_range_sums_loop, "int64[::1](int64[:], int64[:], int64[:], int64[:])"),
    (_holding_loop, "boolean[::1](int64[:], int64[:], int64[:], int64)"),
]


def range_sums(
    values: np.ndarray, nodes: np.ndarray, a: np.ndarray, ln: np.ndarray, jit: bool | None = None
) -> np.ndarray:
    """Per k: the sum of values[nodes[a[k] : a[k] + ln[k]]] (int64)."""
    loop = compiled(*LOOPS[0]) if use_jit(int(ln.sum()), MIN_ROWS, jit) else None
    i64 = np.int64
    if loop is not None:
        return loop(
            values.astype(i64, copy=False),
            nodes.astype(i64, copy=False),
            a.astype(i64, copy=False),
            ln.astype(i64, copy=False),
        )
    cs = np.zeros(int(ln.sum()) + 1, dtype=i64)
    np.cumsum(values[nodes[ranges(a, ln)]], out=cs[1:])
    end = np.cumsum(ln)
    return cs[end] - cs[end - ln]


def sets_holding(
    pool: np.ndarray, a: np.ndarray, ln: np.ndarray, t: int, jit: bool | None = None
) -> np.ndarray:
    """Per set pool[a[k] : a[k] + ln[k]] (each sorted; sets may overlap and lie in any
    order): does it hold t? Compiled: a binary search per set; numpy: one pass over the
    pool from the lowest start (what the sets span)."""
    lo = int(a.min()) if len(a) else len(pool)
    loop = compiled(*LOOPS[1]) if use_jit(len(pool) - lo, MIN_ROWS, jit) else None
    if loop is not None:
        i64 = np.int64
        return loop(
            pool.astype(i64, copy=False), a.astype(i64, copy=False), ln.astype(i64, copy=False), t
        )
    cum = np.zeros(len(pool) - lo + 1, dtype=np.int64)
    np.cumsum(pool[lo:] == t, out=cum[1:])
    return cum[a - lo + ln] > cum[a - lo]


def warm_inputs() -> bool:
    """One compiled call on one range (kernels.warm)."""
    one = np.ones(1, dtype=np.int64)
    got = range_sums(np.array([0, 7]), np.array([1]), np.zeros(1, dtype=np.int64), one, True)
    held = sets_holding(np.array([1, 3]), np.zeros(1, dtype=np.int64), np.array([2]), 3, True)
    return int(got[0]) == 7 and bool(held[0])
