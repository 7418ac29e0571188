"""segments.expand_segments in one compiled pass (the path search's largest cost at 10M).

Why: numpy forms the (distinct set, key) groups of a level by gathering every member's
segments, a stable argsort of their (owner, key) codes, and then merges the groups of
several segments by one sort of their rows (segments._union_groups). Here each owner's
segments are grouped by a counting sort over its few keys, a group of one clean segment
is referenced in place, and the others are merged in a bitmap and read back from it in
node order (a summary bitmap says which of its words to read), so they come out sorted,
written straight into the level's pool; groups of a few rows are collected and sorted
instead. Also the segment table's runs and the prefix sums of its node hashes.

The output is segments.Expanded's, entry for entry (tests compare with the numpy form).
"""

from __future__ import annotations

import numpy as np

from kgreason.jit import compiled

#: the bit index of a power of two x < 2**64 is DEBRUIJN[(x * DEBRUIJN_MAGIC) >> 58]: numba
#: has no portable count-trailing-zeros; a de Bruijn multiply is one multiply and one load.
#: Here, not in a shared module: numba bakes it into this file's cached loops, and only this
#: file's changes invalidate that cache.
DEBRUIJN_MAGIC = np.uint64(0x03F79D71B4CB0A89)
DEBRUIJN = np.array(
    sorted(range(64), key=lambda i: (((1 << i) * 0x03F79D71B4CB0A89) % (1 << 64)) >> 58),
    dtype=np.int64,
)
DEBRUIJN.flags.writeable = False
#: member edge rows below which segments keeps its numpy form
MIN_ROWS = 100_000


def _expand_loop(
    members,
    owner,
    ptr0,
    ptr1,
    key0,
    key1,
    st0,
    st1,
    ln0,
    ln1,
    bad,
    cur,
    summ,
    small,
    hv,
    cum_h,
    bad_cum,
    pool,
    n,
    k2,
    base,
    only,
    filt,
    out,
):  # pragma: no cover (compiled)
    """Entries (code = owner * k2 + key, ascending; a; size; hash) of the sets whose members
    are `members` (one owner's together, owners ascending); the merged sets' nodes are
    written to out[base:] (the level pool's buffer: room for every member row; entry
    a >= base points there), sorted, and their count returned. filt: only the groups whose
    code is in `only` (sorted). bad: bit y set when node y is not kept; cur, summ: zeroed
    bitmaps of n and n / 64 bits (left zeroed)."""
    m = len(members)
    tot_segs = 0
    for i in range(m):
        x = members[i]
        tot_segs += ptr0[x + 1] - ptr0[x] + ptr1[x + 1] - ptr1[x]
    code = np.empty(tot_segs, dtype=np.int64)
    ea = np.empty(tot_segs, dtype=np.int64)
    esz = np.empty(tot_segs, dtype=np.int64)
    eh = np.empty(tot_segs, dtype=np.uint64)
    cnt = np.zeros(k2, dtype=np.int64)
    allow = np.zeros(k2, dtype=np.bool_)  # filt: this owner's wanted keys
    touched = np.empty(k2, dtype=np.int64)
    buf_st = np.empty(tot_segs, dtype=np.int64)
    buf_ln = np.empty(tot_segs, dtype=np.int64)
    one = np.uint64(1)
    six = np.uint64(58)
    n_e = 0
    k = base
    i = 0
    while i < m:
        u = owner[i]
        i1 = i
        while i1 < m and owner[i1] == u:
            i1 += 1
        lo = 0
        hi = 0
        if filt:
            lo = np.searchsorted(only, u * k2)
            hi = np.searchsorted(only, (u + 1) * k2)
            for q in range(lo, hi):
                allow[only[q] - u * k2] = True
        nt = 0
        for j in range(i, i1):  # count this owner's segments per key (both directions)
            x = members[j]
            for d in range(2):
                ptr, key = (ptr0, key0) if d == 0 else (ptr1, key1)
                for s in range(ptr[x], ptr[x + 1]):
                    c = key[s]
                    if filt and not allow[c]:
                        continue
                    if cnt[c] == 0:
                        touched[nt] = c
                        nt += 1
                    cnt[c] += 1
        keys = touched[:nt]
        keys.sort()
        pos = 0
        for t in range(nt):  # cnt[c] becomes the next write position of key c
            c = keys[t]
            size_c = cnt[c]
            cnt[c] = pos
            pos += size_c
        for j in range(i, i1):  # each segment to its key's place
            x = members[j]
            for d in range(2):
                ptr, key, st, ln = (ptr0, key0, st0, ln0) if d == 0 else (ptr1, key1, st1, ln1)
                for s in range(ptr[x], ptr[x + 1]):
                    c = key[s]
                    if filt and not allow[c]:
                        continue
                    buf_st[cnt[c]] = st[s]
                    buf_ln[cnt[c]] = ln[s]
                    cnt[c] += 1
        g0 = 0
        for t in range(nt):
            c = keys[t]
            g1 = cnt[c]  # the end of key c's segments
            cnt[c] = 0
            s0 = buf_st[g0]
            l0 = buf_ln[g0]
            if g1 - g0 == 1 and bad_cum[s0 + l0] == bad_cum[s0]:  # referenced in place
                code[n_e] = u * k2 + c
                ea[n_e] = s0
                esz[n_e] = l0
                eh[n_e] = cum_h[s0 + l0] - cum_h[s0]
                n_e += 1
                g0 = g1
                continue
            k0 = k
            rows = 0
            for b in range(g0, g1):
                rows += buf_ln[b]
            acc = np.uint64(0)
            if rows < small:  # few rows: collect the new ones, sort them (a single run is)
                for b in range(g0, g1):
                    for r in range(buf_st[b], buf_st[b] + buf_ln[b]):
                        y = pool[r]
                        w = y >> 6
                        bit = one << np.uint64(y & 63)
                        if not (bad[w] | cur[w]) & bit:
                            cur[w] |= bit
                            out[k] = y
                            k += 1
                if g1 - g0 > 1:
                    out[k0:k].sort()
                for r in range(k0, k):
                    y = out[r]
                    cur[y >> 6] = 0  # (cur holds this entry's bits only)
                    acc += hv[y]
            else:  # set the bits (and which words have any), then read them in node order
                for b in range(g0, g1):
                    for r in range(buf_st[b], buf_st[b] + buf_ln[b]):
                        y = pool[r]
                        w = y >> 6
                        cur[w] |= one << np.uint64(y & 63)
                        summ[w >> 6] |= one << np.uint64(w & 63)
                for si in range(len(summ)):
                    sw = summ[si]
                    if sw == 0:
                        continue
                    summ[si] = 0
                    while sw:
                        low = sw & (~sw + one)
                        sw ^= low
                        wi = si * 64 + DEBRUIJN[(low * DEBRUIJN_MAGIC) >> six]
                        x = cur[wi] & ~bad[wi]
                        cur[wi] = 0
                        while x:
                            lowx = x & (~x + one)
                            x ^= lowx
                            y = wi * 64 + DEBRUIJN[(lowx * DEBRUIJN_MAGIC) >> six]
                            out[k] = y
                            k += 1
                            acc += hv[y]
            if k > k0:
                code[n_e] = u * k2 + c
                ea[n_e] = k0
                esz[n_e] = k - k0
                eh[n_e] = acc
                n_e += 1
            # else: every node filtered out, no entry
            g0 = g1
        for q in range(lo, hi):
            allow[only[q] - u * k2] = False
        i = i1
    return code[:n_e], ea[:n_e], esz[:n_e], eh[:n_e], k - base


def _runs_loop(ptr, rel, rank, n, r_n, base, fwd):  # pragma: no cover (compiled)
    """segments._runs on one CSR direction (rows sorted by (node, rel, neighbour)): per
    node its segments' range (ptr), and per segment its pool start, length, key and
    node * r_n + rel. A counting pass first, so the outputs are allocated at their size
    (fresh memory costs page faults: over-allocating by rows and copying cost ~2x)."""
    segs = 0
    for v in range(n):
        for j in range(ptr[v], ptr[v + 1]):
            if j == ptr[v] or rel[j] != rel[j - 1]:
                segs += 1
    sptr = np.empty(n + 1, dtype=np.int64)
    start = np.empty(segs, dtype=np.int64)
    ln = np.empty(segs, dtype=np.int64)
    key = np.empty(segs, dtype=np.int64)
    rcode = np.empty(segs, dtype=np.int64)
    s = 0
    for v in range(n):
        sptr[v] = s
        j = ptr[v]
        end = ptr[v + 1]
        while j < end:
            r = rel[j]
            j0 = j
            while j < end and rel[j] == r:
                j += 1
            start[s] = base + j0
            ln[s] = j - j0
            key[s] = rank[r] * 2 + fwd
            rcode[s] = v * r_n + r
            s += 1
    sptr[n] = s
    return sptr, start, ln, key, rcode


def _prefix_hash_loop(pool, hv):  # pragma: no cover (compiled)
    """segments.segment_hashes' prefix sums of hv over the pool (uint64, wrapping): one pass
    (numpy's gather and cumsum wrote and read a pool-sized temporary, ~3.5 ms at 10M)."""
    out = np.empty(len(pool) + 1, dtype=np.uint64)
    acc = np.uint64(0)
    out[0] = acc
    for i in range(len(pool)):
        acc += hv[pool[i]]
        out[i + 1] = acc
    return out


_ARR = "int64[:]"
#: (loop, numba signature) of each compiled loop
LOOPS = [
    (
        _expand_loop,
        "Tuple((int64[::1], int64[::1], int64[::1], uint64[::1], int64))("
        + ", ".join([_ARR] * 10 + ["uint64[::1]"] * 3 + ["int64", "uint64[::1]"])
        + ", uint64[:], int64[:], int64[:], int64, int64, int64, int64[:], boolean, int64[::1])",
    ),
    (
        _runs_loop,
        "UniTuple(int64[::1], 5)(int64[:], int64[:], int64[:], int64, int64, int64, int64)",
    ),
    (_prefix_hash_loop, "uint64[::1](int64[:], uint64[:])"),
]

#: merged groups of fewer rows than this are collected and sorted; larger ones are read
#: back from a bitmap in node order (None: n / 8192, half the bitmap's summary words,
#: which each such read scans; tests set 0 or a large number to take one way only)
SMALL_ROWS: int | None = None


def available() -> bool:
    """Whether the compiled expansion can run (numba present, the loop compiled)."""
    return compiled(*LOOPS[0]) is not None


def expand(members, owner, sg, keep, hv, cum_h, bad_cum, n, k2, buf, base, only=None):
    """The compiled expand_segments: (code, a, size, h, merged count), or None when the
    kernels are not available (the caller then uses numpy). The merged sets' nodes are
    written to buf[base:], which must have room for every row of `members` (writing in
    place: a separate output array and its copy into the pool cost ~10 ms of fresh pages
    per large level); `only`: sorted group codes, the only groups wanted."""
    loop = compiled(*LOOPS[0])
    if loop is None:
        return None
    i64 = np.int64
    # bit y of bad: node y is not kept
    packed = np.packbits(~keep.astype(bool, copy=False), bitorder="little")
    packed = np.concatenate([packed, np.zeros(-len(packed) % 8, dtype=np.uint8)])
    bad = packed.view("<u8").astype(np.uint64, copy=False)
    cur = np.zeros(len(bad), dtype=np.uint64)
    summ = np.zeros((len(bad) + 63) // 64, dtype=np.uint64)
    small = n // 8192 if SMALL_ROWS is None else SMALL_ROWS
    code, a, size, h, count = loop(
        members.astype(i64, copy=False),
        owner.astype(i64, copy=False),
        sg.ptr[0],
        sg.ptr[1],
        sg.key[0],
        sg.key[1],
        sg.start[0],
        sg.start[1],
        sg.ln[0],
        sg.ln[1],
        bad,
        cur,
        summ,
        small,
        hv,
        cum_h,
        bad_cum,
        sg.pool,
        n,
        k2,
        base,
        np.zeros(0, dtype=np.int64) if only is None else only.astype(np.int64, copy=False),
        only is not None,
        buf,
    )
    return code, a, size, h, count


def runs_ready() -> bool:
    """Whether the compiled runs loop is in use, resolved on the calling thread (so threads
    calling `runs` at once do not each compile or load it)."""
    return compiled(*LOOPS[1]) is not None


def runs(ptr, rel, rank, n, r_n, base, fwd):
    """The compiled segments._runs (without its rows output), or None (numpy then)."""
    loop = compiled(*LOOPS[1])
    if loop is None:
        return None
    i64 = np.int64
    return loop(
        ptr.astype(i64, copy=False),
        rel.astype(i64, copy=False),
        rank.astype(i64, copy=False),
        n,
        r_n,
        base,
        fwd,
    )


def prefix_hashes(pool: np.ndarray, hv: np.ndarray) -> np.ndarray | None:
    """The compiled segment_hashes prefix sums, or None (numpy then)."""
    loop = compiled(*LOOPS[2])
    if loop is None:
        return None
    return loop(pool.astype(np.int64, copy=False), hv.astype(np.uint64, copy=False))


def warm_inputs() -> bool:
    """One compiled call on a one-node graph with a self-loop (kernels.warm)."""
    from types import SimpleNamespace

    one, zero = np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    ptr = np.array([0, 1], dtype=np.int64)
    sg = SimpleNamespace(
        ptr=(ptr, ptr),
        key=(one, zero),
        start=(zero, one),
        ln=(one, one),
        pool=np.zeros(2, dtype=np.int64),
    )
    buf = np.zeros(4, dtype=np.int64)
    got = expand(
        zero,
        zero,
        sg,
        np.ones(1, dtype=bool),
        np.ones(1, dtype=np.uint64),
        np.arange(3, dtype=np.uint64),
        np.zeros(3, dtype=np.int64),
        1,
        2,
        buf,
        2,
    )
    ptr_r = runs(ptr, zero, zero, 1, 1, 0, 1)
    cum = prefix_hashes(np.zeros(2, dtype=np.int64), np.full(1, 3, dtype=np.uint64))
    return (
        got is not None
        and len(got[0]) == 2
        and ptr_r is not None
        and len(ptr_r[1]) == 1
        and cum is not None
        and cum.tolist() == [0, 3, 6]
    )
