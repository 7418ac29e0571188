"""Bounded breadth-first expansion shared by the KG backends.

Every backend must truncate at the same triple and report it the same way, so that a
`Subgraph` does not depend on where the graph lives; only how a level's neighbours are
fetched differs (a dict lookup, a batched SPARQL query).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from kgreason.kg.base import Neighbor, Subgraph, Triple

#: fetch(frontier, n_seen) -> neighbours of (some of) the frontier entities. `n_seen` is the
#: number of distinct triples collected so far, for backends that bound each fetch by the
#: triples still allowed. Entities missing from the result have no neighbours.
FetchLevel = Callable[[list[str], int], Awaitable[Mapping[str, Sequence[Neighbor]]]]


def truncation_reason(max_triples: int) -> str:
    return f"max_triples={max_triples} reached"


async def bounded_bfs(
    seeds: Sequence[str], depth: int, max_triples: int, fetch: FetchLevel
) -> Subgraph:
    """Triples within `depth` hops of `seeds`, at most `max_triples` of them.

    Levels are visited in order and each frontier entity's neighbours in the order `fetch`
    gives them; the first new triple past the bound stops the expansion (truncated, sorted
    triples so far). Seeds are de-duplicated keeping their order.
    """
    sub = Subgraph(seeds=list(seeds), depth=depth)
    seen: set[Triple] = set()
    frontier = list(dict.fromkeys(seeds))
    visited = set(frontier)
    for _ in range(depth):
        if not frontier:
            break
        found = await fetch(frontier, len(seen))
        nxt: list[str] = []
        for e in frontier:
            for n in found.get(e, ()):
                t = n.triple(e)
                if t not in seen:
                    if len(seen) >= max_triples:
                        sub.truncated = True
                        sub.truncation_reason = truncation_reason(max_triples)
                        sub.triples = sorted(seen)
                        return sub
                    seen.add(t)
                if n.entity not in visited:
                    visited.add(n.entity)
                    nxt.append(n.entity)
        frontier = nxt
    sub.triples = sorted(seen)
    return sub
