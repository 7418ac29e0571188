"""The subgraph walk (kg/store/graph.py, CSRGraph.expand: PoG's edge-order bound) as one
compiled loop, beside its numpy form.

Why: numpy walks a level by slices and parts of rows, each a handful of passes (edge ids,
seen marks, a PAIR mark to tell which of an edge's two rows comes first, the neighbours of
the new rows, first occurrences of the unvisited ones), and after a cut it counts the
slice's remaining new edges by more passes (the subgraph step was ~13 ms at 10M
triples). Read in order, row by row, an edge is new at its first row and a node at its
first new row: one pass, each row read once.

Same result as the numpy form: the same edges in the same order with the same rows, the
same next frontiers, and for a cut the same
report: the loop keeps the numpy form's chunk and slice bounds (they decide which rows
count as read) and counts the slice's new edges past the cut; a second loop
(kernels/cut.py) counts what the cut left out by walk.left_out's rules (its three stages
and budget), from the rows instead of gathers.

The compiled walk marks seen edges and visited nodes in bitmaps (WalkScratch.walk_bits, 1
bit a mark: 1.1 MB of edges and 150 kB of nodes at 10M triples, against the numpy form's
stamped byte arrays of 8.9 and 1.2 MB), so its two random reads per row (the edge's mark,
the neighbour's) mostly hit the cache; it zeroes the bits it set before it returns
(_clear_loop, over what it took), so no stamp is needed. Measured at 10M triples on 8
questions, same process: 13.8 -> 6.2 ms per walk (2.2x; the byte-stamp loop was 1.2-1.3x
faster than numpy). What is left is the rows' reads and the fresh pages of the walk's
result (Found: ~6 MB for 2x10^5 edges).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kgreason.jit import compiled, use_jit
from kgreason.kg.store.kernels import cut

if TYPE_CHECKING:
    from kgreason.kg.store.graph import CSRGraph
    from kgreason.kg.store.walk import Expansion, Found, WalkScratch

#: store edges below which numpy is used (MetaQA's store never loads numba)
MIN_EDGES = 500_000
#: a walk whose Found buffers would exceed this many edges uses numpy (kernel buffers are
#: allocated up front)
MAX_TRIPLES = 1 << 20


def _walk_loop(  # pragma: no cover (compiled)
    fptr, frel, fdst, rptr, rrel, rsrc, reid, noise, any_noise,
    seen, visited, frontier0, depth, max_triples, chunk_edges,
    f_eid, f_own, f_nbr, f_rel, f_inn,
):  # fmt: skip
    """Walk from frontier0 (distinct); writes the taken edges into the f_* buffers.
    `seen`, `visited`: zeroed bitmaps of the edges and nodes (the walk sets the bits of
    what it takes and reaches, and of frontier0; _clear_loop zeroes them again). Returns
    (count, info, frontier, rows per frontier node): info = [cut, level, ci, budget, u, b,
    read, more, level_edges] when cut (and the cut level's frontier), else info[0] = 0."""
    one = np.uint64(1)
    for j in range(len(frontier0)):
        x = frontier0[j]
        visited[x >> 6] |= one << np.uint64(x & 63)
    info = np.zeros(9, dtype=np.int64)
    cap = max_triples + len(frontier0) + 1
    cur = np.empty(cap, dtype=np.int64)
    nxt = np.empty(cap, dtype=np.int64)
    deg = np.empty(cap, dtype=np.int64)
    nf = len(frontier0)
    cur[:nf] = frontier0
    count = 0
    for level in range(depth):
        total = 0
        for j in range(nf):  # rows per node, read once per level
            x = cur[j]
            deg[j] = fptr[x + 1] - fptr[x] + rptr[x + 1] - rptr[x]
            total += deg[j]
        budget = max(chunk_edges, 2 * (max_triples - count))
        nn = 0
        read = 0
        # chunk ends (walk.chunk_bounds): after the first node whose cumulative rows reach
        # each multiple of the budget below the level's total
        ends = np.empty(nf + 1, dtype=np.int64)
        n_ch = 0
        if total > budget:
            c = 0
            mult = budget
            for j in range(nf):
                c += deg[j]
                if mult < total and c >= mult:
                    ends[n_ch] = j + 1
                    n_ch += 1
                    while mult < total and mult <= c:
                        mult += budget
        if n_ch == 0 or ends[n_ch - 1] != nf:
            ends[n_ch] = nf
            n_ch += 1
        k = 0
        for ci in range(n_ch):
            e = ends[ci]
            clen = 0
            for j in range(k, e):
                clen += deg[j]
            ri = 0  # row index inside the chunk
            s_end = 0  # end of the current slice
            cut = False
            u = 0
            more = 0
            marked = np.empty(0, dtype=np.int64)
            for j in range(k, e):
                x = cur[j]
                for side in range(2):
                    if side == 0:
                        a0, a1 = fptr[x], fptr[x + 1]
                    else:
                        a0, a1 = rptr[x], rptr[x + 1]
                    for q in range(a0, a1):
                        if ri == s_end:  # a new slice starts here
                            if cut:
                                break
                            s_end = ri + max(chunk_edges, 2 * (max_triples - count))
                            read += min(s_end, clen) - ri
                        ri += 1
                        if side == 0:
                            eid, y, r = q, fdst[q], frel[q]
                        else:
                            eid, y, r = reid[q], rsrc[q], rrel[q]
                        if any_noise and noise[r]:
                            continue
                        bit = one << np.uint64(eid & 63)
                        if seen[eid >> 6] & bit:  # taken, or marked past the cut
                            continue
                        seen[eid >> 6] |= bit
                        if cut:  # past the cut: count the slice's other new edges
                            marked[more] = eid  # (to unmark them after)
                            more += 1
                            continue
                        if count == max_triples:
                            cut = True
                            u = ri - 1
                            marked = np.empty(min(s_end, clen) - u, dtype=np.int64)
                            marked[0] = eid
                            more = 1
                            continue
                        f_eid[count] = eid
                        f_own[count] = x
                        f_nbr[count] = y
                        f_rel[count] = r
                        f_inn[count] = side == 1
                        count += 1
                        ybit = one << np.uint64(y & 63)
                        if not visited[y >> 6] & ybit:
                            visited[y >> 6] |= ybit
                            nxt[nn] = y
                            nn += 1
                    if cut and ri == s_end:
                        break
                if cut and ri == s_end:
                    break
            if cut:
                for i in range(more):
                    seen[marked[i] >> 6] &= ~(one << np.uint64(marked[i] & 63))
                info[0] = 1
                info[1] = level
                info[2] = ci
                info[3] = budget
                info[4] = u
                info[5] = min(s_end, clen)
                info[6] = read
                info[7] = more
                info[8] = total
                return count, info, cur[:nf].copy(), deg[:nf].copy()
            k = e
        cur, nxt = nxt, cur
        nf = nn
        if nf == 0:
            break
    return count, info, cur[:0].copy(), deg[:0].copy()


def _clear_loop(seen, visited, f_eid, f_nbr, count, frontier0):  # pragma: no cover (compiled)
    """Zero the bits a walk set: its taken edges, the nodes they reached and its start
    (the only bits _walk_loop leaves set)."""
    for i in range(count):
        e = f_eid[i]
        y = f_nbr[i]
        seen[e >> 6] = 0
        visited[y >> 6] = 0
    for j in range(len(frontier0)):
        visited[frontier0[j] >> 6] = 0
    return count


#: C-contiguous arrays throughout (the store's columns are memory-mapped, read-only):
#: with any-layout arrays the loop ran ~1.4x slower (strided stores into Found)
_RO32 = "Array(int32, 1, 'C', readonly=True)"
_RO64 = "Array(int64, 1, 'C', readonly=True)"
LOOPS = [
    (
        _walk_loop,
        "Tuple((int64, int64[::1], int64[::1], int64[::1]))("
        f"{_RO64}, {_RO32}, {_RO32}, {_RO64}, {_RO32}, {_RO32}, {_RO32}, boolean[::1], boolean,"
        " uint64[::1], uint64[::1], int64[::1], int64, int64, int64,"
        " int64[::1], int64[::1], int64[::1], int32[::1], boolean[::1])",
    ),
    (
        _clear_loop,
        "int64(uint64[::1], uint64[::1], int64[::1], int64[::1], int64, int64[::1])",
    ),
]

_DTYPES = (np.int64, np.int32, np.int32, np.int64, np.int32, np.int32, np.int32)


def _columns(graph: CSRGraph) -> tuple[np.ndarray, ...]:
    """The store columns the loops read, in their argument order."""
    return (
        graph.fwd_ptr, graph.fwd_rel, graph.fwd_dst,
        graph.rev_ptr, graph.rev_rel, graph.rev_src, graph.rev_eid,
    )  # fmt: skip


def walk_compiled(graph, sc, frontier, depth, max_triples, chunk_edges, found, jit=None):
    """The compiled walk over `graph` (CSRGraph) with scratch `sc` from the visited,
    distinct `frontier`, writing into `found` (walk.Found); (count, info, cut frontier)
    as _walk_loop, or None when the numpy form is to be used (small store, KGREASON_JIT=0,
    no numba, other column dtypes, Found buffers that may grow)."""
    if not use_jit(graph.n_edges, MIN_EDGES, jit):
        return None
    cols = _columns(graph)
    if (
        max_triples > MAX_TRIPLES
        or len(found.eids) < min(max_triples, graph.n_edges)
        or any(c.dtype != d for c, d in zip(cols, _DTYPES, strict=True))
        or found.rel.dtype != np.int32
        or not all(c.flags.c_contiguous for c in cols)
    ):
        return None
    kernel = compiled(*LOOPS[0])
    if kernel is None or compiled(*LOOPS[1]) is None or not cut.ready():  # clearing, a cut
        return None
    seen, visited = sc.walk_bits()
    return kernel(
        *cols,
        np.ascontiguousarray(graph.noise),
        graph._any_noise,
        seen,
        visited,
        np.ascontiguousarray(frontier, dtype=np.int64),
        depth,
        max_triples,
        chunk_edges,
        found.eids,
        found.own,
        found.nbr,
        found.rel,
        found.inn,
    )


def expansion(
    graph: CSRGraph,
    got: tuple,
    found: Found,
    sc: WalkScratch,
    max_triples: int,
    scan: int,
    start: np.ndarray,
) -> Expansion:
    """The Expansion of a compiled walk (walk_compiled's `got`, from `start`): its edges,
    and for a cut the report CSRGraph.expand's numpy loop gives: the left-out scan (at most
    `scan` edge slots) from the cut row on, over the cut slice's rest, the chunk's rest and
    the later chunks, by a second loop (kernels/cut.py, walk.left_out's count). Then the
    walk's bitmaps are zeroed again (_clear_loop)."""
    from kgreason.kg.store.walk import Expansion, chunk_bounds

    count, info, frontier, deg = got
    found.count = int(count)
    seen, visited = sc.walk_bits()
    clear = compiled(*LOOPS[1])
    if clear is None:  # walk_compiled checked every loop: cannot happen
        raise RuntimeError("kernels.walk: the clearing loop is not compiled")
    start = np.ascontiguousarray(start, dtype=np.int64)
    if not info[0]:
        clear(seen, visited, found.eids, found.nbr, found.count, start)
        return Expansion(found.eids[: found.count], False, rows=found.rows())
    level, ci, budget, u, b, read, more, total = info[1:].tolist()
    bounds = chunk_bounds(np.cumsum(deg), budget)
    ends = np.array([y for _, y in bounds], dtype=np.int64)
    n_rel, n_ent, exact = cut.left_out(
        _columns(graph), np.ascontiguousarray(graph.noise), graph._any_noise, seen, visited,
        frontier, deg, ends, ci, u, b, scan,
    )  # fmt: skip
    clear(seen, visited, found.eids, found.nbr, found.count, start)
    return Expansion(
        found.eids[: found.count],
        True,
        f"max_triples={max_triples} reached",
        level + 1,
        total - read + more,
        int(n_rel),
        int(n_ent),
        bool(exact),
        rows=found.rows(),
    )


def warm_inputs() -> bool:
    """Compile (or load) the loop and run it on a one-edge graph (kernels.warm)."""
    from kgreason.kg.store.walk import Found, WalkScratch

    class _G:  # the CSRGraph fields walk_compiled reads
        i64, i32 = np.array([0, 1, 1], np.int64), np.zeros(1, np.int32)
        fwd_ptr, fwd_rel, fwd_dst = i64, i32, np.ones(1, np.int32)
        rev_ptr, rev_rel, rev_src, rev_eid = np.array([0, 0, 1], np.int64), i32, i32, i32
        noise, _any_noise, n_edges = np.zeros(1, bool), False, 1

    sc = WalkScratch(2, 1)
    sc.begin()
    start = np.zeros(1, np.int64)
    sc.visit(start)
    found = Found(2, np.dtype(np.int32))
    got = walk_compiled(_G(), sc, start, 2, 1, 8, found, jit=True)
    if got is None or got[0] != 1:
        return False
    res = expansion(_G(), got, found, sc, 1, 8, start)  # type: ignore[arg-type]
    return res.eids.tolist() == [0] and not any(b.any() for b in sc.walk_bits())
