"""Per-group set unions for fastsegs.expand_segments (the path search's largest cost).

Why: a level's (distinct set, key) groups are unions of their members' sorted neighbour
runs. numpy can only form them by sorting every gathered row as a packed (group, node) code
(1-2M rows per level of a large 10M question). The loop drops repeats with a per-node stamp
in one pass and sorts the groups of several runs together by two counting passes.
"""

from __future__ import annotations

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.pog.fastcsr import bits, distinct_sorted
from kgreason.pog.kernels import compiled, use_jit

#: merged rows below which numpy is used (its fixed costs are small there; numba's import
#: and load are not)
MIN_ROWS = 100_000
#: numpy filters after deduplicating when fewer than 1 / LATE_FILTER of the rows are
#: dropped (a free search drops only its start node: masking every row first cost ~8 ms
#: per 10^6 rows)
LATE_FILTER = 16


def _union_loop(pool, st, ln, grp, n_groups, keep, hv, n):  # pragma: no cover (compiled)
    """Per group (segments ordered by group): the kept nodes of its segments, distinct and
    sorted, written one group after another; their count and hash (sum of hv) per group.

    Repeats are dropped by a per-node stamp (the last group that took the node). Sorting
    each group's nodes one by one cost as much as numpy's sort of all rows, so the groups
    of more than one segment are sorted together by two counting passes: by node (into
    node buckets, groups ascending inside), then back to their groups in node order."""
    stamp = np.full(n, -1, dtype=np.int64)
    total = 0
    for i in range(len(ln)):
        total += ln[i]
    out = np.empty(total, dtype=np.int64)
    size = np.zeros(n_groups, dtype=np.int64)
    multi = np.zeros(n_groups, dtype=np.bool_)
    h = np.zeros(n_groups, dtype=np.uint64)
    bucket = np.zeros(n + 1, dtype=np.int64)  # nodes of multi-segment groups, per node
    k = 0
    i = 0
    s_n = len(st)
    while i < s_n:
        g = grp[i]
        k0 = k
        i0 = i
        acc = np.uint64(0)
        while i < s_n and grp[i] == g:
            for j in range(st[i], st[i] + ln[i]):
                x = pool[j]
                if keep[x] and stamp[x] != g:
                    stamp[x] = g
                    out[k] = x
                    k += 1
                    acc += hv[x]
            i += 1
        size[g] = k - k0
        h[g] = acc
        if i - i0 > 1:  # one segment is a sorted run already
            multi[g] = True
            for j in range(k0, k):
                bucket[out[j] + 1] += 1
    m = 0
    for x in range(n):
        m += bucket[x + 1]
        bucket[x + 1] = m
    if m == 0:
        return out[:k], size, h
    start = np.zeros(n_groups, dtype=np.int64)
    for g in range(1, n_groups):
        start[g] = start[g - 1] + size[g - 1]
    by_node = np.empty(m, dtype=np.int64)  # the groups holding node 0, then node 1, ...
    for g in range(n_groups):
        if multi[g]:
            for j in range(start[g], start[g] + size[g]):
                x = out[j]
                by_node[bucket[x]] = g
                bucket[x] += 1
    cur = start.copy()  # bucket[x] is now the end of node x's groups
    j = 0
    for x in range(n):
        while j < bucket[x]:
            g = by_node[j]
            out[cur[g]] = x
            cur[g] += 1
            j += 1
    return out[:k], size, h


#: (loop, numba signature): arrays of any layout, the dtypes union_groups passes
LOOPS = [
    (
        _union_loop,
        "Tuple((int64[::1], int64[::1], uint64[::1]))"
        "(int64[:], int64[:], int64[:], int64[:], int64, boolean[:], uint64[:], int64)",
    )
]


def union_groups(
    pool: np.ndarray,
    st: np.ndarray,
    ln: np.ndarray,
    grp: np.ndarray,
    n_groups: int,
    keep: np.ndarray,
    hv: np.ndarray,
    n: int,
    n_bad: int,
    jit: bool | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of each group's segments pool[st : st + ln] (each sorted and distinct;
    segments ordered by their group grp, 0 <= grp < n_groups), keeping nodes with keep[x]:
    (nodes of group 0, then group 1, ...: sorted within a group), size and set hash (sum of
    hv, wrapping) per group. `n_bad`: how many of the rows keep drops. `jit`: force the
    compiled (True) or numpy (False) form; None decides by size and KGREASON_JIT."""
    kernel = compiled(*LOOPS[0]) if use_jit(int(ln.sum()), MIN_ROWS, jit) else None
    if kernel is not None:
        i64 = np.int64
        return kernel(
            pool.astype(i64, copy=False),
            st.astype(i64, copy=False),
            ln.astype(i64, copy=False),
            grp.astype(i64, copy=False),
            n_groups,
            keep.astype(bool, copy=False),
            hv.astype(np.uint64, copy=False),
            n,
        )
    return _union_numpy(pool, st, ln, grp, n_groups, keep, hv, n, n_bad)


def _union_numpy(pool, st, ln, grp, n_groups, keep, hv, n, n_bad):
    """union_groups by one sort of packed (group, node) codes (timsort: they come grouped,
    with sorted runs inside)."""
    nb = pool[ranges(st, ln)]
    gr = np.repeat(grp, ln)
    late = 0 < n_bad * LATE_FILTER < len(nb)  # few rows to drop: drop them once distinct
    if n_bad and not late:
        ok = keep[nb]
        gr, nb = gr[ok], nb[ok]
    w = bits(n)  # (group, node) packed by shifts: unpacking by division costs ~10x
    mask = (1 << w) - 1
    codes = distinct_sorted(np.sort((gr << w) | nb, kind="stable"))
    if late:
        codes = codes[keep[codes & mask]]
    mg, nodes = codes >> w, codes & mask
    size = np.bincount(mg, minlength=n_groups)
    start = np.zeros(n_groups, dtype=np.int64)
    np.cumsum(size[:-1], out=start[1:])
    h = np.zeros(n_groups, dtype=np.uint64)
    nz = size > 0
    if nz.any():
        h[nz] = np.add.reduceat(hv[nodes], start[nz])
    return nodes, size, h


def warm_inputs() -> bool:
    """One compiled call on a tiny input (kernels.warm)."""
    one = np.zeros(1, dtype=np.int64)
    keep, hv = np.ones(1, dtype=bool), np.ones(1, dtype=np.uint64)
    got = union_groups(one, one, np.ones(1, dtype=np.int64), one, 1, keep, hv, 1, 0, jit=True)
    return len(got[0]) == 1
