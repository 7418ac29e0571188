"""Array kernels of the array graph (pog/arrays/graph.py): sorting edge codes, CSR rows,
breadth-first distances, dead-end pruning. Plain numpy over int arrays, no graph object.

Why these shapes (measured on 2x10^5-edge question subgraphs): numpy 2.x's
`np.unique` hashes, 25x slower than sorting; a plain `np.sort` of 2x10^5 random int64 is
~10 ms on this machine's class, but numpy's stable sort (timsort) runs in ~2 ms on data
that is already nearly sorted, and its stable argsort of uint16 keys is a radix sort. So
`sort_codes` sorts shuffled codes by an LSD radix sort on 16-bit digits (walk.radix_sort,
the one helper the store's sorts share) and nearly sorted ones by a 16-bit bucket pass and
timsort (PRESORTED says which). Everything else is bincount / cumsum / gathers: linear.

API:
    bits(n);  pack(fields, widths) -> int64 codes;  unpack(codes, widths) -> fields
    sort_codes(codes, hi) -> sorted copy;  unique_codes(codes, hi) -> sorted distinct
    row_ptr(src, n) -> CSR row pointer;  group_count(a, b) -> distinct (a, b) of a sorted pair
    bfs(n, u, max_depth, rows) -> undirected hop distances (-1 = farther)
    prune_dead_ends(keep, protected, a, b) -> keep without non-protected degree < 2 nodes
    mirror_mask(h, r, t, inverse, n) -> edges whose mirror (t, inverse[r], h) is present
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.kg.store.walk import radix_sort
from kgreason.pog.arrays.kernels.reduce import BOTTOM_UP, bfs_compiled

#: below this many codes a plain sort is as fast as the bucketed one
SMALL_SORT = 1 << 12
#: sort_codes takes codes whose adjacent pairs ascend at least this often (a 0.04 ms
#: check for 2x10^5 codes) as nearly sorted: a 16-bit bucket pass then timsort beats the
#: radix sort there (reduction's undirected pairs, 87-97% ascending: 1.9-2.6 ms against
#: 2.6-2.8), and loses on shuffled codes (clustering's edge codes in walk order, 50%:
#: 6-10 ms against 3-7)
PRESORTED = 0.75


#: a CSR adjacency: (row pointer, neighbour array)
Rows = tuple[np.ndarray, np.ndarray]


def bits(n: int) -> int:
    """Bits that hold the ids 0 .. n - 1 (at least 1)."""
    return max(int(n - 1).bit_length(), 1)


def pack(fields: Sequence[np.ndarray], widths: Sequence[int]) -> np.ndarray:
    """Non-negative int fields packed into one int64 code per row, the first field highest:
    the codes sort like the field tuples. Shifts, not products: unpacking is then masks
    and shifts, where int64 division (divmod) costs ~10x more."""
    if sum(widths) > 62:
        raise ValueError(f"ids too wide to pack into int64 codes: {list(widths)} bits")
    out = np.array(fields[0], dtype=np.int64)  # a copy, shifted and or-ed in place
    for f, w in zip(fields[1:], widths[1:], strict=True):
        out <<= w
        out |= f
    return out


def unpack(codes: np.ndarray, widths: Sequence[int]) -> list[np.ndarray]:
    """The fields of `pack`ed codes."""
    out = []
    shift = 0
    for w in reversed(widths[1:]):
        if shift:
            f = codes >> shift
            f &= (1 << w) - 1  # in place: one array per field
        else:
            f = codes & ((1 << w) - 1)
        out.append(f)
        shift += w
    out.append(codes >> shift)
    return out[::-1]


def sort_codes(codes: np.ndarray, hi: int, *, sorted_bits: int = 0) -> np.ndarray:
    """np.sort(codes) for non-negative int64 codes < hi (same output, see module doc).
    `sorted_bits`: the codes already come in order of their low bits (radix_sort)."""
    if len(codes) < SMALL_SORT:
        return np.sort(codes)
    if not sorted_bits and np.count_nonzero(codes[1:] >= codes[:-1]) >= PRESORTED * len(codes):
        shift = max(int(hi).bit_length() - 16, 0)  # nearly sorted: bucket, then timsort
        top = (codes >> shift).astype(np.uint16)
        return np.sort(codes[np.argsort(top, kind="stable")], kind="stable")
    return radix_sort(codes, hi, sorted_bits=sorted_bits)


def distinct_sorted(s: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array."""
    if len(s) < 2:
        return s
    m = np.empty(len(s), dtype=bool)
    m[0] = True
    np.not_equal(s[1:], s[:-1], out=m[1:])
    return s[m]


def unique_codes(codes: np.ndarray, hi: int) -> np.ndarray:
    """np.unique(codes) for non-negative int64 codes < hi, without hashing."""
    return distinct_sorted(sort_codes(codes, hi))


def row_ptr(src: np.ndarray, n: int) -> np.ndarray:
    """CSR row pointer of rows grouped by `src` (ids < n)."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr


def group_count(a: np.ndarray, b: np.ndarray) -> int:
    """Number of distinct (a, b) pairs of pair arrays sorted by (a, b)."""
    if len(a) == 0:
        return 0
    return 1 + int(np.count_nonzero((a[1:] != a[:-1]) | (b[1:] != b[:-1])))


def _degree(rows: Sequence[Rows], nodes: np.ndarray) -> list[np.ndarray]:
    return [ptr[nodes + 1] - ptr[nodes] for ptr, _ in rows]


def bfs(
    n: int, u: int, max_depth: int, rows: Sequence[Rows], degree: np.ndarray | None = None
) -> np.ndarray:
    """Hop distance from u over the union of the CSR adjacencies `rows` (-1 = farther than
    max_depth); `rows` must be symmetric together (out- plus in-edges, or undirected).

    Direction-optimising (Beamer et al., SC'12): a level whose frontier has BOTTOM_UP times
    more edge slots than the unvisited nodes is found bottom-up, as the unvisited nodes with a neighbour in
    the frontier. A question subgraph is a few-hop expansion around its topics, so after
    two levels most nodes are visited, and the third level would otherwise read every edge
    to find a handful of nodes. Same distances either way. `degree`: the slots of each node
    over all `rows` (computed when not given)."""

    got = bfs_compiled(n, u, max_depth, rows)  # large graphs: one compiled pass per level
    if got is not None:
        return got
    if degree is None:
        degree = sum((np.diff(ptr) for ptr, _ in rows), np.zeros(n, dtype=np.int64))
    dist = np.full(n, -1, dtype=np.int64)
    dist[u] = 0
    frontier = np.array([u], dtype=np.int64)
    unseen = sum(len(nbr) for _, nbr in rows)  # edge slots of the nodes not yet visited
    for d in range(1, max_depth + 1):
        if not len(frontier):
            break
        slots = int(degree[frontier].sum())
        unseen -= slots
        if slots <= BOTTOM_UP * unseen:  # top-down: the frontier's neighbours
            parts = [
                nbr[ranges(ptr[frontier], c)]
                for (ptr, nbr), c in zip(rows, _degree(rows, frontier), strict=True)
            ]
            nb = np.concatenate(parts) if len(parts) > 1 else parts[0]
            nb = nb[dist[nb] < 0]
            dist[nb] = d
            # the new level, sorted and distinct: a scan of n beats sorting a large level
            frontier = np.flatnonzero(dist == d) if len(nb) > n >> 6 else unique_codes(nb, n)
        else:  # bottom-up: the unvisited nodes next to the frontier
            rest = np.flatnonzero(dist < 0)
            hit = np.zeros(len(rest), dtype=bool)
            for (ptr, nbr), c in zip(rows, _degree(rows, rest), strict=True):
                near = dist[nbr[ranges(ptr[rest], c)]] == d - 1
                hit[np.repeat(np.arange(len(rest)), c)[near]] = True
            frontier = rest[hit]
            dist[frontier] = d
    return dist


def undirected_pairs(a: np.ndarray, b: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct unordered pairs {a, b} (a != b assumed) as (low, high) arrays."""
    w = (bits(n), bits(n))
    codes = unique_codes(pack((np.minimum(a, b), np.maximum(a, b)), w), 1 << sum(w))
    lo, hi = unpack(codes, w)
    return lo, hi


def prune_dead_ends(
    keep: np.ndarray, protected: np.ndarray, a: np.ndarray, b: np.ndarray
) -> np.ndarray:
    """Nodes not `protected` with fewer than two distinct kept neighbours removed repeatedly
    (the unique fixed point), one vectorised round at a time; (a, b) are the distinct
    undirected pairs. Each round drops the pairs that lost an end, so rounds get cheaper."""
    keep = keep.copy()
    n = len(keep)
    while True:
        live = keep[a] & keep[b]
        if not live.all():
            a, b = a[live], b[live]
        deg = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
        drop = keep & ~protected & (deg < 2)
        if not drop.any():
            return keep
        keep &= ~drop


def mirror_mask(
    h: np.ndarray, r: np.ndarray, t: np.ndarray, inverse: np.ndarray, n: int
) -> np.ndarray:
    """True for each edge (h, r, t) whose relation has an inverse (inverse[r] >= 0) and whose
    mirror (t, inverse[r], h) is among the edges; node ids < n."""
    out = np.zeros(len(h), dtype=bool)
    cand = np.flatnonzero(inverse[r] >= 0)
    if not len(cand):
        return out
    w = (bits(n), bits(len(inverse)), bits(n))
    if sum(w) > 62:  # very large stores: number the nodes of these edges densely first
        nodes, dense = np.unique(np.concatenate([h, t]), return_inverse=True)
        h, t, n = dense[: len(h)], dense[len(h) :], len(nodes)
        w = (bits(n), bits(len(inverse)), bits(n))
    codes = sort_codes(pack((h, r, t), w), 1 << sum(w))
    mirror = pack((t[cand], inverse[r[cand]], h[cand]), w)
    pos = np.minimum(np.searchsorted(codes, mirror), len(codes) - 1)
    out[cand] = codes[pos] == mirror
    return out
