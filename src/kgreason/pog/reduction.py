"""Graph reduction (PoG section 4.1): keep only what lies on paths connecting topic entities.

Bidirectional BFS: one breadth-first search from each topic entity gives its (undirected)
distance to every node; a node v lies on a connecting WALK of length <= L between topics
a != b exactly when dist(a, v) + dist(v, b) <= L. Walks may go out and back along a dead end,
which no simple path does, so non-topic nodes left with fewer than two neighbours are then
removed repeatedly (a node is not its own neighbour: with self-loops kept, clustering.py,
the same nodes remain as without them). The reduced graph is the subgraph induced by the
remaining nodes (the paper "regenerates induced subgraphs" from the connecting paths). This
is a superset of the nodes on simple connecting paths (exact membership would need path
enumeration).

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kgreason.pog.backend import dispatch
from kgreason.pog.clustering import ClusteredGraph


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


@dispatch
def bfs_distances(graph: ClusteredGraph, source: str, max_depth: int) -> Mapping[str, int]:
    """Undirected hop distance from `source` to every node within `max_depth`."""
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
    deg: dict[str, int] = {}
    for v in keep:
        ns = graph.neighbors_undirected(v)
        deg[v] = len(ns & keep) - (v in ns)  # (a self-loop is no neighbour)
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
    reduced = connecting_subgraph(graph, present, max_len)
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


@dispatch
def connecting_subgraph(
    graph: ClusteredGraph, topics: list[str], max_len: int
) -> ClusteredGraph | None:
    """The graph restricted to the nodes on connecting walks of length <= max_len between
    the topics (all in the graph), dead ends peeled; None when no two topics connect."""
    present = topics
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
