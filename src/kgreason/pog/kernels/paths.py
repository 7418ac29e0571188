"""Membership tests of fastrestrict.kept_members (restricting found paths, issue 15).

Why: restricting a level of found two-topic paths asks, for each member u of an ancestor
set paired with d, whether u is among the nodes that kept set d reaches backward (its
rows of the reversed keys). numpy answers it by packing every reached row as d * n + node,
sorting them (unique) and binary-searching each member (100k-200k members and as many rows
on the largest levels at 10M). The loop stamps the nodes each pair reaches (the pairs in
order, so a stamp is never reset) and reads each member's stamp: one pass over the rows and
one over the members.
"""

from __future__ import annotations

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.pog.fastsegs import member_sorted
from kgreason.pog.kernels import compiled, use_jit
from kgreason.pog.setids import unique_sorted

#: rows + members below which numpy is used (measured at 10M: the loop wins from ~20k,
#: 3x faster at 100k-200k)
MIN_ROWS = 20_000


def _near_loop(qd, qn, rd, rlo, rk, pool, n_pairs, n):  # pragma: no cover (compiled)
    """out[i]: qn[i] in the union of pool[rlo[r] : rlo[r] + rk[r]] over the ranges r with
    rd[r] == qd[i]. Ranges and queries are bucketed by pair (counting sort), then per pair
    its reached nodes are stamped with the pair and its queries read the stamp."""
    r_ptr = np.zeros(n_pairs + 1, dtype=np.int64)
    for r in range(len(rd)):
        r_ptr[rd[r] + 1] += 1
    q_ptr = np.zeros(n_pairs + 1, dtype=np.int64)
    for i in range(len(qd)):
        q_ptr[qd[i] + 1] += 1
    for d in range(n_pairs):
        r_ptr[d + 1] += r_ptr[d]
        q_ptr[d + 1] += q_ptr[d]
    r_by = np.empty(len(rd), dtype=np.int64)
    cur = r_ptr[:-1].copy()
    for r in range(len(rd)):
        r_by[cur[rd[r]]] = r
        cur[rd[r]] += 1
    q_by = np.empty(len(qd), dtype=np.int64)
    cur = q_ptr[:-1].copy()
    for i in range(len(qd)):
        q_by[cur[qd[i]]] = i
        cur[qd[i]] += 1
    stamp = np.full(n, -1, dtype=np.int64)
    out = np.zeros(len(qd), dtype=np.bool_)
    for d in range(n_pairs):
        if q_ptr[d] == q_ptr[d + 1]:
            continue
        for j in range(r_ptr[d], r_ptr[d + 1]):
            r = r_by[j]
            for x in range(rlo[r], rlo[r] + rk[r]):
                stamp[pool[x]] = d
        for j in range(q_ptr[d], q_ptr[d + 1]):
            i = q_by[j]
            out[i] = stamp[qn[i]] == d
    return out


#: (loop, numba signature)
LOOPS = [
    (
        _near_loop,
        "boolean[::1](int64[:], int64[:], int64[:], int64[:], int64[:], int64[:], int64, int64)",
    )
]


def near_members(
    qd: np.ndarray,
    qn: np.ndarray,
    rd: np.ndarray,
    rlo: np.ndarray,
    rk: np.ndarray,
    pool: np.ndarray,
    n_pairs: int,
    n: int,
    jit: bool | None = None,
) -> np.ndarray:
    """For each query i: is node qn[i] in pool[rlo[r] : rlo[r] + rk[r]] for some range r
    of pair rd[r] == qd[i]? (0 <= pairs < n_pairs, 0 <= nodes < n.) `jit`: force the
    compiled (True) or numpy (False) form; None decides by size and KGREASON_JIT."""
    rows = int(rk.sum()) + len(qd)
    kernel = compiled(*LOOPS[0]) if use_jit(rows, MIN_ROWS, jit) and len(qd) else None
    if kernel is not None:
        i64 = np.int64
        return kernel(  # type: ignore[no-any-return]
            qd.astype(i64, copy=False),
            qn.astype(i64, copy=False),
            rd.astype(i64, copy=False),
            rlo.astype(i64, copy=False),
            rk.astype(i64, copy=False),
            pool.astype(i64, copy=False),
            n_pairs,
            n,
        )
    return _near_numpy(qd, qn, rd, rlo, rk, pool, n)


def _near_numpy(qd, qn, rd, rlo, rk, pool, n):
    """near_members by packed (pair, node) codes: sorted and distinct, then searched."""
    near = unique_sorted(np.repeat(rd, rk) * n + pool[ranges(rlo, rk)])
    return member_sorted(near, qd * n + qn)


def warm_inputs() -> bool:
    """One compiled call on a tiny input (kernels.warm)."""
    one, zero = np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    got = near_members(zero, zero, zero, zero, one, zero, 1, 1, jit=True)
    return bool(got[0])
