"""Clustering's loops: the radix sort the graph stages share (kg/store/walk.radix_sort:
edge codes, a subgraph's edge ids, inverse-pair lookups, the path search's codes) and
pog/arrays/build.from_store after folding as one loop, each beside its numpy form. Which
clustering loop runs, on what buffers and threads, is kernels/cluster.py's (the loops stay
here, beside the helpers they share: numba's disk cache of a loop is invalidated by its own
file only).

Why: numpy sorts one 16-bit digit by a stable argsort of the digit (a counting sort in C)
and a gather of the values in that order, after extracting the digit into an array: four
passes over the values per digit, one of them random. The loop counts every digit in one
pass and then moves the values once per digit (a counting sort's scatter), skipping a
digit all values share: 2-2.5x faster on a question's 2x10^5 codes (clustering
sorts them twice). Same output: the sorted values.

The clustering loop relabels, sorts and builds both CSRs with pooled work arrays, without
the numpy form's intermediate arrays; measured at 10M only 1.0-1.1x faster than numpy
(same process): the key-rank lookups and the scatters are random reads and writes over
multi-MB arrays, and the outputs are ~13 MB of fresh pages, which numpy pays alike.
"""

from __future__ import annotations

import numpy as np

from kgreason.jit import compiled, use_jit

#: values below which numpy is used (MetaQA's subgraphs, at most ~71k triples, never load
#: numba; a 10M question's are 2x10^5)
MIN_ROWS = 100_000
#: digit width (bits): counts per digit are 2**DIGIT int32 (16 measured fastest on a
#: question's 2x10^5 codes: 12, 11, 10 and 8 were 1-15 % slower)
DIGIT = 16
#: the bit index of a power of two x < 2**64 is DEBRUIJN[(x * DEBRUIJN_MAGIC) >> 58] (as
#: kernels/segments; here, not shared: numba bakes it into this file's cached loops)
DEBRUIJN_MAGIC = np.uint64(0x03F79D71B4CB0A89)
DEBRUIJN = np.array(
    sorted(range(64), key=lambda i: (((1 << i) * 0x03F79D71B4CB0A89) % (1 << 64)) >> 58),
    dtype=np.int64,
)
DEBRUIJN.flags.writeable = False


def _lsd(src, dst, length, shift0, width, counts):  # pragma: no cover (compiled)
    """LSD radix sort of src[:length] (non-negative, < 2**width, already in order of their
    low shift0 bits) over DIGIT-bit digits from bit shift0, one counting pass for all
    digits (`counts`: a row per digit); a digit every value shares is skipped. The sorted
    values end in dst when it returns True (an odd number of passes), else in src."""
    nd = max((width - shift0 + DIGIT - 1) // DIGIT, 0)
    size = 1 << DIGIT
    mask = size - 1
    counts[:nd] = 0
    for i in range(length):
        v = src[i] >> shift0
        for d in range(nd):
            counts[d, (v >> (DIGIT * d)) & mask] += 1
    flipped = False
    for d in range(nd):
        c = counts[d]
        one = False  # every value has the same digit: the pass would change nothing
        s = 0
        for k in range(size):
            t = c[k]
            one = one or t == length
            c[k] = s
            s += t
        if one:
            continue
        sh = shift0 + DIGIT * d
        for i in range(length):
            x = src[i]
            k = (x >> sh) & mask
            dst[c[k]] = x
            c[k] += 1
        src, dst = dst, src
        flipped = not flipped
    return flipped


def _radix_loop(values, shift0, width):  # pragma: no cover (compiled)
    """values sorted (see _lsd)."""
    n = len(values)
    nd = max((width - shift0 + DIGIT - 1) // DIGIT, 0)
    counts = np.zeros((max(nd, 1), 1 << DIGIT), dtype=np.int32)
    src = values.copy()
    dst = np.empty(n, dtype=np.int64)
    return dst if _lsd(src, dst, n, shift0, width, counts) else src


def _csr_half(a_buf, b_buf, k, n, wn, wr, counts):  # pragma: no cover (compiled)
    """One CSR on its own: the codes a_buf[:k] radix-sorted (b_buf the scratch), repeats and
    self-loops dropped, decoded, and the row pointer. (h, r, t) codes give the out-edges'
    (h, r, t, optr), (t, r, h) codes the in-edges' (idst, irel, isrc, iptr): the same arrays
    as _csr_arrays, whose in-edges come from the deduplicated out-edges instead, so the two
    halves can run at once (a thread each)."""
    sh = wr + wn
    low = (1 << wn) - 1
    rmask = (1 << wr) - 1
    src = a_buf
    if _lsd(a_buf, b_buf, k, 0, 2 * wn + wr, counts):
        src = b_buf
    x = np.empty(k, dtype=np.int64)
    y = np.empty(k, dtype=np.int64)
    z = np.empty(k, dtype=np.int64)
    ptr = np.zeros(n + 1, dtype=np.int64)
    prev = -1
    e = 0
    for i in range(k):
        c0 = src[i]
        if c0 == prev:
            continue
        prev = c0
        hh, tt = c0 >> sh, c0 & low
        if hh == tt:
            continue
        x[e], y[e], z[e] = hh, (c0 >> wn) & rmask, tt
        ptr[hh + 1] += 1
        e += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    return x[:e], y[:e], z[:e], ptr


def _csr_arrays(a_buf, b_buf, k, n, wn, wr, counts):  # pragma: no cover (compiled)
    """The clustering loops' back end: the out-edges of the edge codes (h, r, t) in
    a_buf[:k] (_csr_half), then the in-edge codes (t, r, h) of those distinct edges sorted
    over their (t, r) bits (the h bits come in order; b_buf the scratch). Returns (h, r, t,
    optr, idst, irel, isrc, iptr) of n local ids."""
    h, r, t, optr = _csr_half(a_buf, b_buf, k, n, wn, wr, counts)
    sh = wr + wn
    low = (1 << wn) - 1
    rmask = (1 << wr) - 1
    e = len(h)
    iptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(e):
        a_buf[i] = (t[i] << sh) | (r[i] << wn) | h[i]
        iptr[t[i] + 1] += 1
    src = a_buf
    if _lsd(a_buf, b_buf, e, wn, 2 * wn + wr, counts):
        src = b_buf
    idst = np.empty(e, dtype=np.int64)
    irel = np.empty(e, dtype=np.int64)
    isrc = np.empty(e, dtype=np.int64)
    for i in range(e):
        c0 = src[i]
        idst[i], irel[i], isrc[i] = c0 >> sh, (c0 >> wn) & rmask, c0 & low
    for x in range(n):
        iptr[x + 1] += iptr[x]
    return h, r, t, optr, idst, irel, isrc, iptr


def _id_bits(n):  # pragma: no cover (compiled)
    """pog/arrays/csr.bits(n): the bits a local id below n takes (at least 1)."""
    wn = 1
    while (1 << wn) < n:
        wn += 1
    return wn


def _cluster_loop(  # pragma: no cover (compiled)
    own, nbr, rel, inn, key_rank, marks, table, magic, lut, wr, rk, work, counts
):
    """pog/arrays/build.from_store after folding, in one loop: local ids of the rows' ends in
    key-rank order (a bit per store node in `marks`, a zeroed bitmap that the scan of its
    words leaves zeroed again; `lut` per rank), then _csr_arrays of their edge codes.
    Returns (h, r, t, optr, idst, irel, isrc, iptr, ranks). `rk`, `work`, `counts`: pooled
    work arrays (2 * rows int32, 2 * rows int64, 4 x 2**DIGIT int32), so only the outputs
    are fresh pages (a page fault costs ~2 us on the measuring VM). `table`, `magic`: the
    de Bruijn lookup of a bit's index."""
    k = len(own)
    one = np.uint64(1)
    last = -1
    qo = 0
    for i in range(k):
        x = own[i]
        if x != last:  # reading nodes come in runs
            last = x
            qo = key_rank[x]
            marks[qo >> 6] |= one << np.uint64(qo & 63)
        q = key_rank[nbr[i]]
        marks[q >> 6] |= one << np.uint64(q & 63)
        rk[2 * i] = qo
        rk[2 * i + 1] = q
    m = 0
    for w in range(len(marks)):
        b = marks[w]
        while b:
            b &= b - one
            m += 1
    ranks = np.empty(m, dtype=np.int64)
    j = 0
    six = np.uint64(58)
    for w in range(len(marks)):  # the marked ranks in order: the local ids
        b = marks[w]
        if b:
            marks[w] = 0
            base = w << 6
            while b:
                low = b & (~b + one)
                b ^= low
                q = base + table[(low * magic) >> six]
                lut[q] = j
                ranks[j] = q
                j += 1
    wn = _id_bits(m)
    sh = wr + wn
    a_buf = work[:k]
    for i in range(k):
        u = np.int64(lut[rk[2 * i]])
        v = np.int64(lut[rk[2 * i + 1]])
        if inn[i]:
            u, v = v, u
        a_buf[i] = (u << sh) | (np.int64(rel[i]) << wn) | v
    h, r, t, optr, idst, irel, isrc, iptr = _csr_arrays(a_buf, work[k:], k, m, wn, wr, counts)
    return h, r, t, optr, idst, irel, isrc, iptr, ranks


def _popcount(x):  # pragma: no cover (compiled)
    """The set bits of a uint64 (SWAR: numba has no portable popcount)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


def _ordered_front(  # pragma: no cover (compiled)
    own, nbr, rel, inn, marks, before, table, magic, wr, codes, swapped
):
    """_cluster_ordered's front end: the local ids' store ids (returned), and the rows' edge
    codes (h, r, t) into `codes`; with a non-empty `swapped`, also their (t, r, h) codes,
    for _csr_half on a second thread."""
    k = len(own)
    one = np.uint64(1)
    last = -1
    for i in range(k):
        x = own[i]
        if x != last:  # reading nodes come in runs
            last = x
            marks[x >> 6] |= one << np.uint64(x & 63)
        q = nbr[i]
        marks[q >> 6] |= one << np.uint64(q & 63)
    m = 0
    for w in range(len(marks)):
        before[w] = m
        if marks[w]:
            m += _popcount(marks[w])
    ranks = np.empty(m, dtype=np.int64)
    j = 0
    six = np.uint64(58)
    for w in range(len(marks)):  # the marked ids in order: the local ids' store ids
        b = marks[w]
        base = w << 6
        while b:
            low = b & (~b + one)
            b ^= low
            ranks[j] = base + table[(low * magic) >> six]
            j += 1
    wn = _id_bits(m)
    sh = wr + wn
    both = len(swapped) > 0
    for i in range(k):
        x, y = own[i], nbr[i]
        u = before[x >> 6] + _popcount(marks[x >> 6] & ((one << np.uint64(x & 63)) - one))
        v = before[y >> 6] + _popcount(marks[y >> 6] & ((one << np.uint64(y & 63)) - one))
        if inn[i]:
            u, v = v, u
        rr = np.int64(rel[i]) << wn
        codes[i] = (u << sh) | rr | v
        if both:
            swapped[i] = (v << sh) | rr | u
    for w in range(len(marks)):
        marks[w] = 0
    return ranks


def _cluster_ordered(  # pragma: no cover (compiled)
    own, nbr, rel, inn, marks, before, table, magic, wr, work, counts
):
    """_cluster_loop for a store whose node ids are in key order (`keys.rank` is the
    identity: kg/store/build.py numbers nodes so): the ends are marked by id, and an end's
    local id is the marked ids before it, read off the bitmap (`before`: the marks before
    each word) instead of a random read of a store-sized table. The bitmap (150 kB at 10M
    triples) stays in the core's cache, where the key-rank and local-id tables (4.8 MB
    each) did not: 1.6x faster on a 10M question's 2x10^5 rows, the same arrays."""
    k = len(own)
    a_buf = work[:k]
    none = work[:0]
    ranks = _ordered_front(own, nbr, rel, inn, marks, before, table, magic, wr, a_buf, none)
    m = len(ranks)
    wn = _id_bits(m)
    h, r, t, optr, idst, irel, isrc, iptr = _csr_arrays(a_buf, work[k:], k, m, wn, wr, counts)
    return h, r, t, optr, idst, irel, isrc, iptr, ranks


_I = "int64[::1]"
_CSR = f"Tuple(({', '.join(['int64[:]'] * 3 + [_I] * 5)}))"
#: helpers compiled first, in order (each sees the ones before it), and seen by the loops
#: that call them (kernels.compiled's helpers)
_LSD = (("_lsd", _lsd, "boolean(int64[::1], int64[::1], int64, int64, int64, int32[:, ::1])"),)
_RO32 = "Array(int32, 1, 'C', readonly=True)"
_RO64 = "Array(int64, 1, 'C', readonly=True)"
_ID_BITS = ("_id_bits", _id_bits, "int64(int64)")
_POPCOUNT = ("_popcount", _popcount, "int64(uint64)")
_BACK = (
    *_LSD,
    (
        "_csr_half",
        _csr_half,
        "Tuple((int64[:], int64[:], int64[:], int64[::1]))"
        "(int64[::1], int64[::1], int64, int64, int64, int64, int32[:, ::1])",
    ),
    (
        "_csr_arrays",
        _csr_arrays,
        f"{_CSR}(int64[::1], int64[::1], int64, int64, int64, int64, int32[:, ::1])",
    ),
    _ID_BITS,
)
_FRONT = (
    "_ordered_front",
    _ordered_front,
    f"int64[::1](int64[::1], int64[::1], {_RO32}, boolean[::1], uint64[::1], int64[::1],"
    f" {_RO64}, uint64, int64, int64[::1], int64[::1])",
)
_OUT = f"Tuple(({', '.join(['int64[:]'] * 3 + [_I] * 6)}))"
LOOPS = [
    (_radix_loop, "int64[::1](int64[::1], int64, int64)", _LSD),
    (
        _cluster_loop,
        f"{_OUT}(int64[::1], int64[::1], {_RO32}, boolean[::1], {_RO32}, uint64[::1], {_RO64},"
        " uint64, int32[::1], int64, int32[::1], int64[::1], int32[:, ::1])",
        _BACK,
    ),
    (
        _cluster_ordered,
        f"{_OUT}(int64[::1], int64[::1], {_RO32}, boolean[::1], uint64[::1], int64[::1],"
        f" {_RO64}, uint64, int64, int64[::1], int32[:, ::1])",
        (*_BACK, _POPCOUNT, _FRONT),
    ),
    (_ordered_front, _FRONT[2], (_ID_BITS, _POPCOUNT)),
    (_csr_half, _BACK[1][2], _LSD),
]


def radix_compiled(
    values: np.ndarray, width: int, sorted_bits: int = 0, jit: bool | None = None
) -> np.ndarray | None:
    """np.sort(values) for int64 values in [0, 2**width) whose low `sorted_bits` bits are
    in order already, by the compiled loop; None when numpy is to be used (small input,
    KGREASON_JIT=0, no numba, 2**31 values or more)."""
    if len(values) >= 1 << 31 or not use_jit(len(values), MIN_ROWS, jit):
        return None
    kernel = compiled(*LOOPS[0])
    if kernel is None:
        return None
    return kernel(np.ascontiguousarray(values, dtype=np.int64), sorted_bits, width)


def warm_inputs() -> bool:
    """One compiled call on a tiny input (kgreason.jit.warm); the clustering loops are
    called by pog/arrays/kernels/cluster.py's warm_inputs."""
    got = radix_compiled(np.array([3, 1, 2], dtype=np.int64), 2, jit=True)
    return got is not None and got.tolist() == [1, 2, 3]
