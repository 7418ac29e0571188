"""Membership tests of restrict.kept_members (restricting found paths).

Why: restricting a level of found two-topic paths asks, for each member u of an ancestor
set paired with d, whether u is among the nodes that kept set d reaches backward (its
rows of the reversed keys). numpy answers it by packing every reached row as d * n + node,
sorting them (unique) and binary-searching each member (100k-200k members and as many rows
on the largest levels at 10M). The loop stamps the nodes each pair reaches (the pairs in
order, so a stamp is never reset) and reads each member's stamp: one pass over the rows and
one over the members.

`kept` is the whole of kept_members in one loop: per pair it looks each member's (or each
kept node's) segment of every key up by a binary search among that node's own segments
(numpy searched all segment codes, and gathered every row first), and reads the rows
either forward (a member is kept at its first neighbour stamped as in the kept set) or
backward (the nodes the kept set reaches are stamped), whichever asks fewer lookups.
"""

from __future__ import annotations

import numpy as np

from kgreason.jit import compiled, use_jit
from kgreason.kg.store.build_index import ranges
from kgreason.pog.arrays.segments import member_sorted, segment_table
from kgreason.pog.arrays.set_ids import unique_sorted

#: rows + members below which numpy is used (measured at 10M: the loop wins from ~20k,
#: 3x faster at 100k-200k)
MIN_ROWS = 20_000
#: members from which kept_members takes `kept` (numba loaded): measured on ten hub
#: two-topic questions at 10M, the numpy form costs ~1 ms a call at any size, the loop
#: ~0.4 ms on the small ones and 2-3x less than numpy on the 20k-240k ones
KEPT_MIN_ROWS = 1


def _buckets(keys, n_keys):  # pragma: no cover (compiled)
    """A counting sort of the indices by key (0 <= key < n_keys): (ptr, by), the indices of
    key d being by[ptr[d] : ptr[d + 1]], in order."""
    ptr = np.zeros(n_keys + 1, dtype=np.int64)
    for i in range(len(keys)):
        ptr[keys[i] + 1] += 1
    for d in range(n_keys):
        ptr[d + 1] += ptr[d]
    by = np.empty(len(keys), dtype=np.int64)
    cur = ptr[:-1].copy()
    for i in range(len(keys)):
        by[cur[keys[i]]] = i
        cur[keys[i]] += 1
    return ptr, by


def _near_loop(qd, qn, rd, rlo, rk, pool, n_pairs, n):  # pragma: no cover (compiled)
    """out[i]: qn[i] in the union of pool[rlo[r] : rlo[r] + rk[r]] over the ranges r with
    rd[r] == qd[i]. Ranges and queries are bucketed by pair (counting sort), then per pair
    its reached nodes are stamped with the pair and its queries read the stamp."""
    r_ptr, r_by = _buckets(rd, n_pairs)
    q_ptr, q_by = _buckets(qd, n_pairs)
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


def _segment_of(
    x, c, ptr0, rc0, st0, ln0, ptr1, rc1, st1, ln1, rel_of, r_n
):  # pragma: no cover (compiled)
    """The pool rows (r0, r1) of node x by key code c: out-edges (ptr0, rc0, st0, ln0) when
    c is forward (c & 1), else in-edges; found by a binary search of x * r_n + relation
    among x's own segment codes. (0, 0) when x has no such edge."""
    code = x * r_n + rel_of[c >> 1]
    fwd = c & 1
    lo = ptr0[x] if fwd else ptr1[x]
    end = ptr0[x + 1] if fwd else ptr1[x + 1]
    hi = end
    rc = rc0 if fwd else rc1
    while lo < hi:
        mid = (lo + hi) >> 1
        if rc[mid] < code:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and rc[lo] == code:
        r0 = st0[lo] if fwd else st1[lo]
        return r0, r0 + (ln0[lo] if fwd else ln1[lo])
    return 0, 0


def _kept_loop(
    mem,
    d_of,
    g_lo,
    g_hi,
    bc,
    dk,
    kpool,
    kstart,
    klens,
    ptr0,
    rc0,
    st0,
    ln0,
    ptr1,
    rc1,
    st1,
    ln1,
    rel_of,
    r_n,
    seg_pool,
    n,
):  # pragma: no cover (compiled)
    """out[i]: has mem[i] an edge by a key bc[g_lo[d]:g_hi[d]] (d = d_of[i]) to a member of
    kept set dk[d] (kpool[kstart[s] : kstart[s] + klens[s]])? (_segment_of finds a key's
    rows.)"""
    n_d = len(g_lo)
    q_ptr, q_by = _buckets(d_of, n_d)
    stamp = np.zeros(n, dtype=np.int64)  # d + 1: in kept set d (forward) or reached (backward)
    out = np.zeros(len(mem), dtype=np.bool_)
    for d in range(n_d):
        if q_ptr[d + 1] == q_ptr[d]:
            continue
        a0 = kstart[dk[d]]
        a1 = a0 + klens[dk[d]]
        forward = q_ptr[d + 1] - q_ptr[d] <= a1 - a0
        for j in range(a0, a1):
            y = kpool[j]
            if forward:  # stamp the kept set, then follow each member's rows into it
                stamp[y] = d + 1
                continue
            for b in range(g_lo[d], g_hi[d]):  # stamp what it reaches by the reversed keys
                r0, r1 = _segment_of(
                    y, bc[b] ^ 1, ptr0, rc0, st0, ln0, ptr1, rc1, st1, ln1, rel_of, r_n
                )
                for r in range(r0, r1):
                    stamp[seg_pool[r]] = d + 1
        for j in range(q_ptr[d], q_ptr[d + 1]):
            i = q_by[j]
            x = mem[i]
            if not forward:
                out[i] = stamp[x] == d + 1
                continue
            for b in range(g_lo[d], g_hi[d]):
                r0, r1 = _segment_of(
                    x, bc[b], ptr0, rc0, st0, ln0, ptr1, rc1, st1, ln1, rel_of, r_n
                )
                for r in range(r0, r1):
                    if stamp[seg_pool[r]] == d + 1:
                        out[i] = True
                        break
                if out[i]:
                    break
    return out  # (stamps are never reset: each pair has its own value)


#: (loop, numba signature)
_BUCKETS = ("_buckets", _buckets, "UniTuple(int64[::1], 2)(int64[:], int64)")
LOOPS = [
    (
        _near_loop,
        "boolean[::1](int64[:], int64[:], int64[:], int64[:], int64[:], int64[:], int64, int64)",
        (_BUCKETS,),
    ),
    (
        _kept_loop,
        "boolean[::1](" + ", ".join(["int64[:]"] * 18) + ", int64, int64[:], int64)",
        (
            _BUCKETS,
            (
                "_segment_of",
                _segment_of,
                "UniTuple(int64, 2)(int64, int64, " + ", ".join(["int64[:]"] * 9) + ", int64)",
            ),
        ),
    ),
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


def kept(g, sets, dk, bd, bc, mem, d_of) -> np.ndarray | None:
    """restrict.kept_members compiled (bd, bc: each key of each pair's group, by pair),
    or None when the loop is not available."""
    loop = compiled(*LOOPS[1])
    if loop is None:
        return None
    sg = segment_table(g)
    i64 = np.int64
    pool, start, lens = sets
    g_lo = np.searchsorted(bd, np.arange(len(dk))).astype(i64)
    g_hi = np.searchsorted(bd, np.arange(len(dk)), side="right").astype(i64)
    seg_pool = sg.pool
    return loop(  # type: ignore[no-any-return]
        mem.astype(i64, copy=False),
        d_of.astype(i64, copy=False),
        g_lo,
        g_hi,
        bc.astype(i64, copy=False),
        dk.astype(i64, copy=False),
        pool.astype(i64, copy=False),
        start.astype(i64, copy=False),
        lens.astype(i64, copy=False),
        sg.ptr[0],
        sg.rcode[0],
        sg.start[0],
        sg.ln[0],
        sg.ptr[1],
        sg.rcode[1],
        sg.start[1],
        sg.ln[1],
        np.argsort(g.rel_rank).astype(i64),
        max(len(g.rel_names), 1),
        seg_pool,
        g.n,
    )


def _near_numpy(qd, qn, rd, rlo, rk, pool, n):
    """near_members by packed (pair, node) codes: sorted and distinct, then searched."""
    near = unique_sorted(np.repeat(rd, rk) * n + pool[ranges(rlo, rk)])
    return member_sorted(near, qd * n + qn)


def warm_inputs() -> bool:
    """One compiled call on a tiny input (kernels.warm)."""
    one, zero = np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    got = near_members(zero, zero, zero, zero, one, zero, 1, 1, jit=True)
    return bool(got[0])
