"""Bounded enumeration of simple paths between two nodes (either edge direction).

PoG's path exploration looks for all paths of length <= L between topic entities. On a
skewed graph that set explodes, so the walk stops at `max_paths` results or `max_expansions`
node expansions and says which bound it hit. It is a depth-first search pruned by the hop
distance to the target (known exactly up to `prune_depth` hops, or fewer when the
breadth-first scan around the target would exceed `prune_edges` edges; farther nodes count as
one hop beyond), so only prefixes that can still reach the target in time are extended.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from kgreason.kg.store.graph import CSRGraph


@dataclass
class PathResult:
    #: each path is its edge ids from source to target (see CSRGraph.triples)
    paths: list[list[int]] = field(default_factory=list)
    truncated: bool = False
    reason: str = ""
    expansions: int = 0


class _Stop(Exception):
    pass


def find_paths(
    graph: CSRGraph,
    source: int,
    target: int,
    max_len: int,
    *,
    max_paths: int = 1000,
    max_expansions: int = 20_000,
    prune_depth: int = 2,
    prune_edges: int = 100_000,
) -> PathResult:
    res = PathResult()
    if source == target or max_len < 1:
        return res
    dist8, bound = graph.distances(target, max(0, min(prune_depth, max_len - 1)), prune_edges)
    dist = dist8.astype(np.int64)
    dist[dist > bound] = bound + 1
    cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    on_path = {source}
    edges: list[int] = []

    def expand(v: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        got = cache.get(v)
        if got is None:
            if res.expansions >= max_expansions:
                res.truncated, res.reason = True, f"max_expansions={max_expansions} reached"
                raise _Stop
            res.expansions += 1
            e = graph.edges(np.array([v]))
            got = cache[v] = (e.nbr, e.eid, dist[e.nbr])
        return got

    into_target: dict[int, list[int]] = {}
    te = graph.edges(np.array([target]))
    for n, e in zip(te.nbr.tolist(), te.eid.tolist(), strict=True):
        into_target.setdefault(n, []).append(e)

    def walk(v: int, depth: int) -> None:
        remaining = max_len - depth - 1
        if remaining == 0:  # last hop: read the target's edges, not v's (v may be a hub)
            for e in into_target.get(v, ()):
                res.paths.append([*edges, e])
                if len(res.paths) >= max_paths:
                    res.truncated, res.reason = True, f"max_paths={max_paths} reached"
                    raise _Stop
            return
        nbr, eid, lb = expand(v)
        ok = lb <= remaining
        for n, e in zip(nbr[ok].tolist(), eid[ok].tolist(), strict=True):
            if n == target:
                res.paths.append([*edges, e])
                if len(res.paths) >= max_paths:
                    res.truncated, res.reason = True, f"max_paths={max_paths} reached"
                    raise _Stop
            elif remaining > 0 and n not in on_path:
                on_path.add(n)
                edges.append(e)
                walk(n, depth + 1)
                edges.pop()
                on_path.discard(n)

    with contextlib.suppress(_Stop):
        walk(source, 0)
    return res
