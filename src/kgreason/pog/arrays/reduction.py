"""Graph reduction (pog/reduction.py) on the array graph: the topics' BFS distances over the
CSR rows (compiled on large graphs, each topic on its own thread), the keep mask, dead ends
peeled, and the induced subgraph by mask; the same nodes as the reference."""

from __future__ import annotations

from functools import partial

import numpy as np

from kgreason.jit import run_parallel
from kgreason.pog.arrays.csr import prune_dead_ends, undirected_pairs
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.arrays.kernels.reduce import bfs_compiled

#: edges from which the topics' BFS run on threads (a thread costs ~0.1 ms; MetaQA's
#: graphs, at most ~71k triples, stay on the calling thread)
PARALLEL_EDGES = 100_000


def _distances(graph: ArrayClusteredGraph, u: int, max_len: int) -> np.ndarray:
    """Hop distances from local id u (-1: farther than max_len): int8 from the compiled
    BFS on large graphs (an eighth of the fresh memory; sums of two stay below 127),
    else graph.local_distances."""
    rows = [(graph.optr, graph.odst), (graph.iptr, graph.isrc)]
    got = bfs_compiled(graph.n, u, max_len, rows, dtype=np.int8)
    return got if got is not None else graph.local_distances(u, max_len)


def connecting_subgraph(
    graph: ArrayClusteredGraph, present: list[str], max_len: int
) -> ArrayClusteredGraph | None:
    """reduction.connecting_subgraph on local-id arrays: the same keep set, vectorised (no
    per-node loop)."""
    ids = [graph.index.get(t) for t in present]
    # over the directed CSRs both directions (no undirected copy of the graph is built);
    # large graphs: each topic's BFS on its own thread (the compiled loop frees the GIL)
    calls = [partial(_distances, graph, u, max_len) for u in ids if u is not None]
    big = len(graph.odst) >= PARALLEL_EDGES
    found = iter(run_parallel(calls, None if big else 1))
    dists = [next(found) if u is not None else None for u in ids]
    keep = np.zeros(graph.n, dtype=bool)
    topics = np.array([u for u in ids if u is not None], dtype=np.int64)
    keep[topics] = True
    connected = False
    for i in range(len(present)):
        for j in range(i + 1, len(present)):
            di, dj = dists[i], dists[j]
            if di is None or dj is None or di[ids[j]] < 0:
                continue
            connected = True
            keep |= (di >= 0) & (dj >= 0) & (di + dj <= max_len)
    if not connected:
        return None
    kept = prune_dead_ends_mask(graph, keep, topics)
    reduced = graph.restrict_mask(kept)
    reduced.extra = reduced.extra | frozenset(t for t in present if t not in graph.index)
    if len(present) == 2 and all(u is not None for u in ids):
        # each kept node's shortest path to either topic is kept whole (its nodes satisfy
        # the same d_a + d_b <= max_len, and no peeled dead end lies inside a path), so
        # these are the reduced graph's own distances: the segment search reads them
        # instead of building an undirected copy of the graph and searching it again
        reduced.topic_distances = (
            max_len,
            {
                int(u): np.where(kept, d, -1)
                for u, d in zip(ids, dists, strict=True)
                if u is not None and d is not None
            },
        )
    return reduced


def prune_dead_ends_mask(
    g: ArrayClusteredGraph, keep: np.ndarray, topics: np.ndarray
) -> np.ndarray:
    """Non-topic nodes with fewer than two distinct kept neighbours removed repeatedly (the
    unique fixed point of reduction._prune_dead_ends), over the edges with both ends kept.
    Large graphs: one compiled peel over both CSRs (kernels/reduce.py), same mask. A node
    is not its own neighbour: a graph with self-loops (kept by its builder) takes the numpy
    form without them, as the compiled peel would count them."""
    from kgreason.pog.arrays.kernels.reduce import prune_compiled

    protected = np.zeros(len(keep), dtype=bool)
    protected[topics] = True
    loop = g.h == g.t
    if not loop.any():
        got = prune_compiled(keep, protected, [(g.optr, g.odst), (g.iptr, g.isrc)])
        if got is not None:
            return got
    e = keep[g.h] & keep[g.t] & ~loop
    a, b = undirected_pairs(g.h[e], g.t[e], g.n)
    return prune_dead_ends(keep, protected, a, b)
