"""The exact comparison behind set_ids.canon: candidate pairs of sets with equal hash and
size, compared element by element.

Why: a level's reached sets repeat a lot (many distinct sets reach the same genre or year
by the same key), and every repeat must be verified equal before it is merged. numpy does
that with two gathers of every compared element and a bincount (~11 ms per chunk of a
large 10M question); the loop stops at the first differing element and reads nothing else.
"""

from __future__ import annotations

import numpy as np

from kgreason.jit import compiled, use_jit
from kgreason.kg.store.build_index import ranges

#: compared elements below which numpy is used
MIN_ROWS = 50_000


def _differ_loop(nodes, start, i, j, cnt):  # pragma: no cover (compiled)
    """Per pair k: do sets i[k] and j[k] (cnt[k] elements each) differ?"""
    out = np.zeros(len(i), dtype=np.bool_)
    for k in range(len(i)):
        a = start[i[k]]
        b = start[j[k]]
        for x in range(cnt[k]):
            if nodes[a + x] != nodes[b + x]:
                out[k] = True
                break
    return out


LOOPS = [
    (
        _differ_loop,
        "boolean[::1](int64[:], int64[:], int64[:], int64[:], int64[:])",
    )
]


def differ(
    nodes: np.ndarray,
    start: np.ndarray,
    i: np.ndarray,
    j: np.ndarray,
    cnt: np.ndarray,
    jit: bool | None = None,
) -> np.ndarray:
    """Per pair k: whether nodes[start[i[k]] :][: cnt[k]] and nodes[start[j[k]] :][: cnt[k]]
    differ (the caller has checked both sets have cnt[k] elements)."""
    loop = compiled(*LOOPS[0]) if use_jit(int(cnt.sum()), MIN_ROWS, jit) else None
    if loop is not None:
        i64 = np.int64
        return loop(
            nodes.astype(i64, copy=False),
            start.astype(i64, copy=False),
            i.astype(i64, copy=False),
            j.astype(i64, copy=False),
            cnt.astype(i64, copy=False),
        )
    pair = np.repeat(np.arange(len(i)), cnt)
    diff = nodes[ranges(start[i], cnt)] != nodes[ranges(start[j], cnt)]
    return np.bincount(pair, weights=diff, minlength=len(i)) > 0


def warm_inputs() -> bool:
    """One compiled call on two one-element sets (kernels.warm)."""
    z, one = np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64)
    return bool(differ(np.array([3, 4], dtype=np.int64), np.array([0, 1]), z, one, one, True)[0])
