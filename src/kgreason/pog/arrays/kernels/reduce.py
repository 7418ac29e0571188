"""Reduction's whole-graph loops (pog/reduction.py): breadth-first distances over a
question graph's CSR rows and dead-end pruning, each beside its numpy form in csr.py.

Why: numpy does a BFS level by gathering every frontier row and deduplicating it (a sort
or a scan of all nodes per level), and dead-end pruning by rounds of bincounts over the
distinct undirected pairs (which need a sort of all edges first). A queue and a per-node
stamp do each in one pass over the rows (reduction was ~19 ms at 10M triples).
Both give exactly the numpy forms' output: BFS distances and the pruning's fixed point
(the largest node set where every unprotected node keeps two distinct neighbours) are
unique, whatever the visiting order.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from kgreason.jit import compiled, run_parallel, use_jit

#: bfs goes bottom-up when the frontier has this many times the unvisited nodes' edge
#: slots (a bottom-up slot costs ~3x a top-down one: a repeat, a compare and a scatter)
BOTTOM_UP = 4

#: edge slots (row entries: two per edge) below which numpy is used (MetaQA's graphs, at
#: most ~71k edges, never load numba; a 10M question's hold 4x10^5)
MIN_ROWS = 200_000
#: nodes above which numpy is used (the loops queue and stamp nodes in int32)
MAX_NODES = (1 << 31) - 4


def _bfs_loop(u, max_depth, p1, n1, p2, n2, dist):  # pragma: no cover (compiled)
    """Hop distance from u over the rows (p1, n1) and (p2, n2) into `dist` (all -1 on
    entry; stays -1 farther than max_depth), level by level and direction-optimising as
    csr.bfs: a level whose frontier has BOTTOM_UP times the unvisited nodes' slots is
    found bottom-up (each unvisited node stops at its first neighbour in the frontier)."""
    n = len(dist)
    queue = np.empty(n, dtype=np.int32)
    dist[u] = 0
    queue[0] = u
    lo, hi = 0, 1
    unseen = len(n1) + len(n2)
    for d in range(1, max_depth + 1):
        if lo == hi:
            break
        slots = 0
        for k in range(lo, hi):
            x = queue[k]
            slots += p1[x + 1] - p1[x] + p2[x + 1] - p2[x]
        unseen -= slots
        end = hi
        if slots <= BOTTOM_UP * unseen:
            for k in range(lo, hi):
                x = queue[k]
                for j in range(p1[x], p1[x + 1]):
                    y = n1[j]
                    if dist[y] < 0:
                        dist[y] = d
                        queue[end] = y
                        end += 1
                for j in range(p2[x], p2[x + 1]):
                    y = n2[j]
                    if dist[y] < 0:
                        dist[y] = d
                        queue[end] = y
                        end += 1
        else:
            for x in range(n):
                if dist[x] >= 0:
                    continue
                hit = False
                for j in range(p1[x], p1[x + 1]):
                    if dist[n1[j]] == d - 1:
                        hit = True
                        break
                if not hit:
                    for j in range(p2[x], p2[x + 1]):
                        if dist[n2[j]] == d - 1:
                            hit = True
                            break
                if hit:
                    queue[end] = x
                    end += 1
            for k in range(hi, end):  # after the scan: a new node is no frontier node
                dist[queue[k]] = d
        lo, hi = hi, end


def _prune_loop(keep, protected, p1, n1, p2, n2):  # pragma: no cover (compiled)
    """csr.prune_dead_ends over the rows (p1, n1), (p2, n2) (both directions of the
    edges; no self-loops): distinct kept neighbours counted with a stamp, then nodes
    peeled one at a time, each neighbour losing one when a node goes."""
    n = len(keep)
    alive = keep.copy()
    # int32 work arrays: half the fresh pages (a page fault costs ~3 us on the VM)
    deg = np.zeros(n, dtype=np.int32)
    mark = np.full(n, -1, dtype=np.int32)
    stack = np.empty(n, dtype=np.int32)
    top = 0
    for x in range(n):
        if not alive[x]:
            continue
        c = 0
        for side in range(2):  # both directions' rows
            p, nb = (p1, n1) if side == 0 else (p2, n2)
            for j in range(p[x], p[x + 1]):
                y = nb[j]
                if alive[y] and mark[y] != x:
                    mark[y] = x
                    c += 1
        deg[x] = c
        if c < 2 and not protected[x]:
            stack[top] = x
            top += 1
    token = -2  # stamps below every node id: a fresh one per removal
    while top > 0:
        top -= 1
        x = stack[top]
        alive[x] = False
        for side in range(2):
            p, nb = (p1, n1) if side == 0 else (p2, n2)
            for j in range(p[x], p[x + 1]):
                y = nb[j]
                if alive[y] and mark[y] != token:
                    mark[y] = token
                    deg[y] -= 1
                    if deg[y] == 1 and not protected[y]:
                        stack[top] = y
                        top += 1
        token -= 1
    return alive


def _restrict_loop(keep, a, b, c, n):  # pragma: no cover (compiled)
    """The rows (a, b, c) with keep[a] and keep[c], in order, and the row pointer of the
    kept a (rows grouped by a, a < n), in one pass."""
    a2 = np.empty(len(a), dtype=np.int64)  # (only the pages written are touched)
    b2 = np.empty(len(a), dtype=np.int64)
    c2 = np.empty(len(a), dtype=np.int64)
    ptr = np.zeros(n + 1, dtype=np.int64)
    k = 0
    for i in range(len(a)):
        x, z = a[i], c[i]
        if keep[x] and keep[z]:
            a2[k], b2[k], c2[k] = x, b[i], z
            ptr[x + 1] += 1
            k += 1
    for x in range(n):
        ptr[x + 1] += ptr[x]
    return a2[:k], b2[:k], c2[:k], ptr


_ROWS = "int64[:], int64[:], int64[:], int64[:]"
LOOPS = [
    (_bfs_loop, f"void(int64, int64, {_ROWS}, int64[::1])"),
    (_prune_loop, f"boolean[::1](boolean[:], boolean[:], {_ROWS})"),
    (
        _restrict_loop,
        "Tuple((int64[::1], int64[::1], int64[::1], int64[::1]))"
        "(boolean[:], int64[:], int64[:], int64[:], int64)",
    ),
    (_bfs_loop, f"void(int64, int64, {_ROWS}, int8[::1])"),  # reduction's distances
]


def _i64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.int64, copy=False)


def _two(rows) -> tuple[np.ndarray, ...]:
    """(p1, n1, p2, n2) of one or two CSR adjacencies (an empty second one if one)."""
    (p1, n1), *rest = rows
    if rest:
        ((p2, n2),) = rest
    else:
        p2, n2 = np.zeros(len(p1), dtype=np.int64), np.zeros(0, dtype=np.int64)
    return _i64(p1), _i64(n1), _i64(p2), _i64(n2)


def bfs_compiled(
    n: int, u: int, max_depth: int, rows, jit: bool | None = None, dtype: type = np.int64
):
    """csr.bfs's distances (of `dtype`: int64, or int8 when max_depth < 64, as
    reduction asks) by the compiled loop, or None when the numpy form is to be used
    (small graph, KGREASON_JIT=0, no numba). `rows`: one or two CSR (ptr, nbr)."""
    slots = sum(len(nbr) for _, nbr in rows)
    if len(rows) > 2 or n > MAX_NODES or not use_jit(slots, MIN_ROWS, jit):
        return None
    small = dtype == np.int8
    if small and not 0 <= max_depth < 64:
        return None
    kernel = compiled(*LOOPS[3 if small else 0])
    if kernel is None:
        return None
    dist = np.full(n, -1, dtype=np.int8 if small else np.int64)
    kernel(u, max_depth, *_two(rows), dist)
    return dist


def prune_compiled(keep, protected, rows, jit: bool | None = None):
    """csr.prune_dead_ends's mask over the kept nodes' rows (both directions of
    every edge), or None when the numpy form is to be used."""
    slots = sum(len(nbr) for _, nbr in rows)
    if len(rows) > 2 or len(keep) > MAX_NODES or not use_jit(slots, MIN_ROWS, jit):
        return None
    kernel = compiled(*LOOPS[1])
    if kernel is None:
        return None
    return kernel(np.asarray(keep, dtype=bool), np.asarray(protected, dtype=bool), *_two(rows))


def restrict_compiled(keep, rows, n: int, jit: bool | None = None):
    """For each (a, b, c) of `rows`: the rows with both ends kept (keep[a], keep[c]), in
    order, and the row pointer of the kept a; None when the numpy form is to be used."""
    if not use_jit(sum(len(a) for a, _, _ in rows), MIN_ROWS, jit):
        return None
    kernel = compiled(*LOOPS[2])
    if kernel is None:
        return None
    keep = np.asarray(keep, dtype=bool)
    calls = [partial(kernel, keep, _i64(a), _i64(b), _i64(c), n) for a, b, c in rows]
    return run_parallel(calls)  # (each CSR on its own thread: the loop frees the GIL)


def warm_inputs() -> bool:
    """One compiled call of each loop on a tiny input (kernels.warm)."""
    ptr, nbr = np.array([0, 1, 2], dtype=np.int64), np.array([1, 0], dtype=np.int64)
    d = bfs_compiled(2, 0, 3, [(ptr, nbr)], jit=True)
    d8 = bfs_compiled(2, 0, 3, [(ptr, nbr)], jit=True, dtype=np.int8)
    k = prune_compiled(np.ones(2, bool), np.zeros(2, bool), [(ptr, nbr)], jit=True)
    z = np.zeros(1, dtype=np.int64)
    got = restrict_compiled(np.ones(1, bool), [(z, z, z)], 1, jit=True)
    ok = got is not None and got[0][3].tolist() == [0, 1]
    ok = ok and d8 is not None and d8.tolist() == [0, 1]
    return ok and d is not None and d.tolist() == [0, 1] and k is not None and not k.any()
