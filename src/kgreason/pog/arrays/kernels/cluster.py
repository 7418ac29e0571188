"""Which clustering loop of kg/store/kernels/build.py runs, on what buffers and threads.

`cluster_compiled` is build.from_store's compiled form after folding: the key-rank loop
for stores whose node ids are in first-appearance order, the key-ordered loop for stores
built since kg/store/build._key_order, and that loop with its two CSRs made at once on two
threads (`_ordered_on_threads`) from PARALLEL_ROWS rows. Every form gives the same arrays
(tests compare them). Work arrays come from the walk scratch's pool, so only the outputs
are fresh pages.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from kgreason.jit import compiled, run_parallel, threads, use_jit
from kgreason.kg.store.kernels.build import DEBRUIJN, DEBRUIJN_MAGIC, DIGIT, MIN_ROWS
from kgreason.kg.store.kernels.build import LOOPS as BUILD_LOOPS

#: rows from which a key-ordered store's two CSRs are made on two threads at once
PARALLEL_ROWS = 100_000
#: the loops are kg.store.kernels.build's (they share its radix digit loop)
LOOPS: list[tuple] = []


def cluster_compiled(own, nbr, rel, inn, key_rank, sc, n_rel: int, jit=None):
    """_cluster_loop's arrays for the rows (reading node own, neighbour nbr, relation rel,
    in-row inn or None) of a store with n_rel relations, with the walk scratch `sc`
    (WalkScratch) for the marks; key_rank None: the store's node ids are in key order
    (_cluster_ordered). None when numpy is to be used (small, KGREASON_JIT=0, no numba,
    other dtypes, codes that might not fit 62 bits)."""
    wr = max(int(n_rel - 1).bit_length(), 1)
    wn = max(int(2 * len(own)).bit_length(), 1)  # at most 2 * rows distinct ends
    if (
        2 * wn + wr > 62  # (then 4 digits of counts suffice)
        or len(own) >= 1 << 30
        or (key_rank is not None and key_rank.dtype != np.int32)
        or np.asarray(rel).dtype != np.int32
        or not use_jit(len(own), MIN_ROWS, jit)
    ):
        return None
    kernel = compiled(*BUILD_LOOPS[1 if key_rank is not None else 2])
    if kernel is None:
        return None
    i64, k = np.int64, len(own)
    rows = (
        np.ascontiguousarray(own, dtype=i64),
        np.ascontiguousarray(nbr, dtype=i64),
        np.ascontiguousarray(rel),
        np.zeros(len(own), dtype=bool) if inn is None else np.ascontiguousarray(inn),
    )
    marks = sc.walk_bits()[1]  # (rank space is node space; zeroed before and after)
    before = sc.buffer("cluster_before", len(marks), np.int64) if key_rank is None else None
    if before is not None and threads() > 1 and k >= PARALLEL_ROWS:
        got = _ordered_on_threads(rows, marks, before, wr, sc)
        if got is not None:
            return got
    work = sc.buffer("cluster_work", 2 * k, np.int64)
    counts = sc.buffer("cluster_counts", 4 << DIGIT, np.int32).reshape(4, 1 << DIGIT)
    if before is not None:
        return kernel(*rows, marks, before, DEBRUIJN, DEBRUIJN_MAGIC, wr, work, counts)
    rk = sc.buffer("cluster_rk", 2 * k, np.int32)
    lut = sc.node_scratch
    key_rank = np.ascontiguousarray(key_rank)
    return kernel(*rows, key_rank, marks, DEBRUIJN, DEBRUIJN_MAGIC, lut, wr, rk, work, counts)


def _ordered_on_threads(rows, marks, before, wr: int, sc):
    """_cluster_ordered with its two CSRs made at once (_csr_half, a thread each): the front
    end writes each row's (h, r, t) and (t, r, h) codes, and each half sorts, dedups and
    decodes its own. Same arrays; None when a loop is not compiled."""
    front, half = compiled(*BUILD_LOOPS[3]), compiled(*BUILD_LOOPS[4])
    if front is None or half is None:
        return None
    k = len(rows[0])
    work = sc.buffer("cluster_work", 4 * k, np.int64)
    a, b, c, d = (work[i * k : (i + 1) * k] for i in range(4))
    counts = sc.buffer("cluster_counts", 8 << DIGIT, np.int32).reshape(2, 4, 1 << DIGIT)
    ranks = front(*rows, marks, before, DEBRUIJN, DEBRUIJN_MAGIC, wr, a, c)
    n = len(ranks)
    wn = max((n - 1).bit_length(), 1)  # (_id_bits)
    out, inn = run_parallel(
        [partial(half, a, b, k, n, wn, wr, counts[0]), partial(half, c, d, k, n, wn, wr, counts[1])]
    )
    return (*out, *inn, ranks)


def warm_inputs() -> bool:
    """One call of each clustering loop on a tiny input (kgreason.jit.warm)."""
    from kgreason.kg.store.walk import WalkScratch

    sc = WalkScratch(2, 1)
    sc.begin()
    z, o = np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64)
    rank = np.array([1, 0], dtype=np.int32)
    c = cluster_compiled(z, o, np.zeros(1, np.int32), None, rank, sc, 1, jit=True)
    d = cluster_compiled(z, o, np.zeros(1, np.int32), None, None, sc, 1, jit=True)
    rows = (z, o, np.zeros(1, np.int32), np.zeros(1, dtype=bool))
    before = np.zeros(1, dtype=np.int64)
    e = _ordered_on_threads(rows, sc.walk_bits()[1], before, 1, sc)
    return (
        c is not None
        and c[8].tolist() == [0, 1]
        and d is not None
        and d[8].tolist() == [0, 1]
        and d[0].tolist() == [0]
        and e is not None
        and [x.tolist() for x in e] == [x.tolist() for x in d]
    )
