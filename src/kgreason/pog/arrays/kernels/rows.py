"""A level of path vectors in one pass: each step's row is its parent's row plus its arrow's
and its set's piece rows (pog/arrays/table_text.TextTree.vectors).

Why: a 10M hub question's fuzzy ranking sums 20,000 paths' 256-dimensional vectors level by
level; numpy does each level in five passes over n x 256 float32 (three gathers, two adds),
memory-bound, ~2-3 ms a level of 20,000 steps. The loop reads each row once and adds in the
same order, ((parent + arrow) + set), so the sums are the same bit for bit.
"""

from __future__ import annotations

import numpy as np

from kgreason.jit import compiled, use_jit

#: rows x dimensions below which numpy is used
MIN_ROWS = 200_000


def _step_rows_loop(prev, par, pieces, a, x):  # pragma: no cover (compiled)
    n, dim = len(par), pieces.shape[1]
    out = np.empty((n, dim), dtype=np.float32)
    for i in range(n):
        p, ai, xi = par[i], a[i], x[i]
        for d in range(dim):
            out[i, d] = (prev[p, d] + pieces[ai, d]) + pieces[xi, d]
    return out


LOOPS = [
    (
        _step_rows_loop,
        "float32[:, ::1](float32[:, ::1], int64[::1], float32[:, ::1], int64[::1], int64[::1])",
    ),
]


def step_rows(
    prev: np.ndarray,
    par: np.ndarray,
    pieces: np.ndarray,
    a: np.ndarray,
    x: np.ndarray,
    jit: bool | None = None,
) -> np.ndarray:
    """(prev[par] + pieces[a]) + pieces[x], float32 rows."""
    loop = (
        compiled(*LOOPS[0])
        if prev.dtype == np.float32 and use_jit(len(par) * pieces.shape[1], MIN_ROWS, jit)
        else None
    )
    if loop is None:
        return (prev[par] + pieces[a]) + pieces[x]
    i64 = np.int64
    return loop(
        np.ascontiguousarray(prev),
        np.ascontiguousarray(par, dtype=i64),
        np.ascontiguousarray(pieces, dtype=np.float32),
        np.ascontiguousarray(a, dtype=i64),
        np.ascontiguousarray(x, dtype=i64),
    )


def warm_inputs() -> bool:
    """One compiled call on two rows (kernels.warm)."""
    prev = np.ones((1, 2), dtype=np.float32)
    pieces = np.arange(4, dtype=np.float32).reshape(2, 2)
    got = step_rows(
        prev, np.zeros(2, dtype=np.int64), pieces, np.array([0, 1]), np.array([1, 1]), True
    )
    return got.tolist() == [[3.0, 5.0], [5.0, 7.0]]
