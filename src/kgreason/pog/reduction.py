"""Graph reduction (PoG section 4.1): keep only what lies on paths connecting topic entities.

Bidirectional BFS: one breadth-first search from each topic entity gives its (undirected)
distance to every node; a node v lies on a connecting WALK of length <= L between topics
a != b exactly when dist(a, v) + dist(v, b) <= L. Walks may go out and back along a dead end,
which no simple path does, so non-topic nodes left with fewer than two neighbours are then
removed repeatedly. The reduced graph is the subgraph induced by the remaining nodes (the
paper "regenerates induced subgraphs" from the connecting paths). This is a superset of the
nodes on simple connecting paths (exact membership would need path enumeration).

L defaults to |Topic| * D_max, the longest entity path PoG ever searches (the supplement
condition of section 4.2).

Cases the paper leaves open, decided here:
- one topic entity: there is nothing to connect; the D_max-hop neighbourhood is kept whole
  (`reduced=False`, note says why);
- several topic entities none of which connect within L: the graph is kept whole, so that the
  later phases (LLM supplement, node expand) still have material; the note says so.

API:
    reduce_graph(graph, topics, *, max_len) -> Reduction
    bfs_distances(graph, source, max_depth) -> dict[str, int]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from kgreason.jit import run_parallel
from kgreason.pog.arrays.csr import prune_dead_ends, undirected_pairs
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.arrays.kernels.reduce import bfs_compiled
from kgreason.pog.clustering import ClusteredGraph

#: edges from which the topics' BFS run on threads (a thread costs ~0.1 ms; MetaQA's
#: graphs, at most ~71k triples, stay on the calling thread)
PARALLEL_EDGES = 100_000


@dataclass
class Reduction:
    graph: ClusteredGraph
    entities_before: int
    entities_after: int
    triples_before: int
    triples_after: int
    #: False when the graph was kept whole (see `note`)
    reduced: bool
    note: str = ""


def bfs_distances(graph: ClusteredGraph, source: str, max_depth: int) -> dict[str, int]:
    """Undirected hop distance from `source` to every node within `max_depth`."""
    if isinstance(graph, ArrayClusteredGraph):
        return graph.distances(source, max_depth)
    dist = {source: 0}
    frontier = [source]
    for d in range(1, max_depth + 1):
        nxt: list[str] = []
        for u in frontier:
            for v in graph.neighbors_undirected(u):
                if v not in dist:
                    dist[v] = d
                    nxt.append(v)
        if not nxt:
            break
        frontier = nxt
    return dist


def _prune_dead_ends(graph: ClusteredGraph, keep: set[str], topics: set[str]) -> set[str]:
    keep = set(keep)
    deg = {v: len(graph.neighbors_undirected(v) & keep) for v in keep}
    stack = [v for v, d in deg.items() if d < 2 and v not in topics]
    while stack:
        v = stack.pop()
        if v not in keep:
            continue
        keep.discard(v)
        for u in graph.neighbors_undirected(v):
            if u in keep:
                deg[u] -= 1
                if deg[u] < 2 and u not in topics:
                    stack.append(u)
    return keep


def reduce_graph(graph: ClusteredGraph, topics: Sequence[str], *, max_len: int) -> Reduction:
    present = [t for t in dict.fromkeys(topics) if t in graph]
    n_ent, n_tri = graph.entity_count(), graph.triple_count()

    def whole(note: str) -> Reduction:  # nothing cut: the graph as it came, and why
        return Reduction(graph, n_ent, n_ent, n_tri, n_tri, reduced=False, note=note)

    if len(present) < 2:
        return whole("fewer than two topic entities in the subgraph: neighbourhood kept whole")
    if isinstance(graph, ArrayClusteredGraph):
        reduced = _reduce_arrays(graph, present, max_len)
    else:
        reduced = _reduce_sets(graph, present, max_len)
    if reduced is None:
        return whole(f"topic entities not connected within {max_len} hops: subgraph kept whole")
    return Reduction(
        reduced,
        n_ent,
        reduced.entity_count(),
        n_tri,
        reduced.triple_count(),
        reduced=True,
        note=f"kept nodes on paths of length <= {max_len} connecting topic entities",
    )


def _reduce_sets(graph: ClusteredGraph, present: list[str], max_len: int) -> ClusteredGraph | None:
    """The graph restricted to nodes on connecting paths; None when no two topics connect."""
    dists = [bfs_distances(graph, t, max_len) for t in present]
    keep: set[str] = set(present)
    connected = False
    for i in range(len(present)):
        for j in range(i + 1, len(present)):
            di, dj = dists[i], dists[j]
            if present[j] not in di:
                continue
            connected = True
            small, big = (di, dj) if len(di) <= len(dj) else (dj, di)
            keep.update(v for v, d in small.items() if v in big and d + big[v] <= max_len)
    if not connected:
        return None
    return graph.restrict(_prune_dead_ends(graph, keep, set(present)))


def _distances(graph: ArrayClusteredGraph, u: int, max_len: int) -> np.ndarray:
    """Hop distances from local id u (-1: farther than max_len): int8 from the compiled
    BFS on large graphs (an eighth of the fresh memory; sums of two stay below 127),
    else graph.local_distances."""
    rows = [(graph.optr, graph.odst), (graph.iptr, graph.isrc)]
    got = bfs_compiled(graph.n, u, max_len, rows, dtype=np.int8)
    return got if got is not None else graph.local_distances(u, max_len)


def _reduce_arrays(
    graph: ArrayClusteredGraph, present: list[str], max_len: int
) -> ClusteredGraph | None:
    """_reduce_sets on local-id arrays: the same keep set, vectorised (no per-node loop)."""
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
    Large graphs: one compiled peel over both CSRs (kernels/reduce.py), same mask."""
    from kgreason.pog.arrays.kernels.reduce import prune_compiled

    protected = np.zeros(len(keep), dtype=bool)
    protected[topics] = True
    got = prune_compiled(keep, protected, [(g.optr, g.odst), (g.iptr, g.isrc)])
    if got is not None:
        return got
    e = keep[g.h] & keep[g.t]
    a, b = undirected_pairs(g.h[e], g.t[e], g.n)
    return prune_dead_ends(keep, protected, a, b)
