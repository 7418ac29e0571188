"""Clustering's loops (pog/fastbuild.py): relabelling a store subgraph's ends to local ids
and building the clustered graph's two CSRs, each beside its numpy form.

Why: numpy relabels by a mark, a scan and three gathers, and builds the CSRs by radix
sorts of packed edge codes (two or three 16-bit passes over all edges, twice: out-edges
by (h, r, t), in-edges by (t, r, h)) plus bincounts for the row pointers (issue 15:
clustering was ~14 ms at 10M triples). Here one counting pass puts every edge in its
head's row; a row is short, so sorting each row in place (insertion sort, numba's sort
for long rows) is cheap, and dropping repeats and self-loops is a scan of the sorted
row. The in-edge CSR is built the same way from the out-edges. Output: exactly the arrays
of the numpy form (sorted distinct (h, r, t) without self-loops, sorted (t, r, h), both
row pointers).
"""

from __future__ import annotations

import numpy as np

from kgreason.pog.kernels import compiled, use_jit

#: edges below which numpy is used (MetaQA's subgraphs never load numba)
MIN_ROWS = 50_000
#: rows up to this long are sorted by insertion
INSERTION = 24


def _relabel_loop(own, nbr, inn, key_rank, visited, stamp, lut):  # pragma: no cover
    """(local head, local tail, key ranks of the local ids): local ids number the
    distinct ends in key-rank order; `visited` (one byte per store node, marked with
    `stamp`) and `lut` (int32, per rank) are the store's pooled scratch."""
    k = len(own)
    m = 0
    for i in range(k):  # (two lookups written out: a loop over a tuple is ~5x slower)
        q = key_rank[own[i]]
        if visited[q] != stamp:
            visited[q] = stamp
            m += 1
        q = key_rank[nbr[i]]
        if visited[q] != stamp:
            visited[q] = stamp
            m += 1
    ranks = np.empty(m, dtype=np.int64)
    j = 0
    for q in range(len(visited)):
        if visited[q] == stamp:
            lut[q] = j
            ranks[j] = q
            j += 1
    lh = np.empty(k, dtype=np.int64)
    lt = np.empty(k, dtype=np.int64)
    for i in range(k):
        a = lut[key_rank[own[i]]]
        b = lut[key_rank[nbr[i]]]
        if inn[i]:
            lh[i], lt[i] = b, a
        else:
            lh[i], lt[i] = a, b
    return lh, lt, ranks


def _csr_loop(h, r, t, n, wn):  # pragma: no cover (compiled)
    """The clustered graph's arrays from edges (h, r, t) (local ids < n < 2**wn, any
    order, repeats and self-loops allowed): out-edges (h, r, t) sorted and distinct
    without self-loops, their row pointer, in-edges (t, r, h) sorted, their row pointer."""
    k = len(h)
    mask = (1 << wn) - 1
    ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(k):
        ptr[h[i] + 1] += 1
    for x in range(n):
        ptr[x + 1] += ptr[x]
    buf = np.empty(k, dtype=np.int64)
    fill = ptr[:-1].copy()
    for i in range(k):
        x = h[i]
        buf[fill[x]] = (r[i] << wn) | t[i]
        fill[x] += 1
    oh = np.empty(k, dtype=np.int64)
    orl = np.empty(k, dtype=np.int64)
    ot = np.empty(k, dtype=np.int64)
    optr = np.zeros(n + 1, dtype=np.int64)
    cnt = np.zeros(n + 1, dtype=np.int64)  # in-degree, for the in-edge rows
    m = 0
    for x in range(n):
        a, b = ptr[x], ptr[x + 1]
        if b - a <= INSERTION:
            for i in range(a + 1, b):
                v = buf[i]
                j = i - 1
                while j >= a and buf[j] > v:
                    buf[j + 1] = buf[j]
                    j -= 1
                buf[j + 1] = v
        else:
            buf[a:b].sort()
        last = -1
        for i in range(a, b):
            c = buf[i]
            y = c & mask
            if c != last and y != x:
                oh[m], orl[m], ot[m] = x, c >> wn, y
                cnt[y + 1] += 1
                m += 1
            last = c
        optr[x + 1] = m
    for x in range(n):
        cnt[x + 1] += cnt[x]
    iptr = cnt.copy()
    for i in range(m):
        y = ot[i]
        buf[cnt[y]] = (orl[i] << wn) | oh[i]
        cnt[y] += 1
    idst = np.empty(m, dtype=np.int64)
    irel = np.empty(m, dtype=np.int64)
    isrc = np.empty(m, dtype=np.int64)
    for y in range(n):
        a, b = iptr[y], iptr[y + 1]
        if b - a <= INSERTION:
            for i in range(a + 1, b):
                v = buf[i]
                j = i - 1
                while j >= a and buf[j] > v:
                    buf[j + 1] = buf[j]
                    j -= 1
                buf[j + 1] = v
        else:
            buf[a:b].sort()
        for i in range(a, b):
            c = buf[i]
            idst[i], irel[i], isrc[i] = y, c >> wn, c & mask
    return oh[:m], orl[:m], ot[:m], optr, idst, irel, isrc, iptr


_I = "int64[::1]"
#: a store's memory-mapped column (read-only; writable arrays match it too)
RO32 = "Array(int32, 1, 'A', readonly=True)"
LOOPS = [
    (
        _relabel_loop,
        f"Tuple(({_I}, {_I}, {_I}))"
        f"(int64[:], int64[:], boolean[:], {RO32}, uint8[:], uint8, int32[:])",
    ),
    (
        _csr_loop,
        f"Tuple(({', '.join(['int64[:]'] * 3 + [_I] * 5)}))"
        "(int64[:], int64[:], int64[:], int64, int64)",
    ),
]


def relabel_compiled(own, nbr, inn, key_rank, sc, jit: bool | None = None):
    """(local heads, local tails, key ranks of the local ids) of the rows (reading node
    own, neighbour nbr, in-row inn), with the walk scratch `sc` (WalkScratch) for the
    marks; None when the numpy form is to be used (small, KGREASON_JIT=0, no numba, a
    store whose key ranks are not int32)."""
    if key_rank.dtype != np.int32 or not use_jit(len(own), MIN_ROWS, jit):
        return None
    kernel = compiled(*LOOPS[0])
    if kernel is None:
        return None
    i64 = np.int64
    return kernel(
        own.astype(i64, copy=False),
        nbr.astype(i64, copy=False),
        np.asarray(inn, dtype=bool) if inn is not None else np.zeros(len(own), dtype=bool),
        key_rank,
        sc.visited,
        np.uint8(sc.stamp),
        sc.node_scratch,
    )


def csr_compiled(h, r, t, n: int, jit: bool | None = None):
    """(h, r, t, optr, idst, irel, isrc, iptr): the clustered graph's arrays of the edges
    (h, r, t) (local ids < n), as fastgraph builds them from unique_codes; None when the
    numpy form is to be used."""
    if not use_jit(len(h), MIN_ROWS, jit):
        return None
    kernel = compiled(*LOOPS[1])
    if kernel is None:
        return None
    wn = max(int(n - 1).bit_length(), 1)
    i64 = np.int64
    r = np.asarray(r).astype(i64, copy=False)
    if len(r) and int(r.max()) >= 1 << (62 - wn):
        return None  # codes too wide (never for a store's relation ids)
    return kernel(h.astype(i64, copy=False), r, t.astype(i64, copy=False), n, wn)


def warm_inputs() -> bool:
    """One compiled call of each loop on a tiny input (kernels.warm)."""
    from kgreason.kg.store.walk import WalkScratch

    sc = WalkScratch(2, 1)
    sc.begin()
    z, o = np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64)
    rank = np.array([1, 0], dtype=np.int32)
    got = relabel_compiled(z, o, np.zeros(1, bool), rank, sc, jit=True)
    csr = csr_compiled(z, z, o, 2, jit=True)
    return got is not None and got[2].tolist() == [0, 1] and csr is not None
