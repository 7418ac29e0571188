"""Node-expand exploration (section 4.2, Algorithm 1 lines 28-37): grow paths by the 1-hop
neighbours of their not-yet-visited entities, read from the FULL KG (not the subgraph).

One round (the caller loops D = 1..D_max, prunes and asks the LLM between rounds):
    ExtractEntity: the entities on the paths, in path order, minus `visited`
                   (at most `max_entities`; the rest wait for a later round, reported);
    Find_1_hop_Edges: one batched `kg.neighbors` call;
    MergeTogether: for a path p whose node set at position i holds expanded entities, the
                   neighbours are clustered by (relation, direction) like the subgraph, and
                   each cluster becomes a new path p.hops[:i] + ({members} -> r -> {nbrs})
                   (relations joining the same two sets are one hop, see paths.py).
                   When i is the end of p this appends one hop; from a middle entity it forks
                   a branch that keeps p's prefix. Entities already on that prefix are not
                   re-entered. New hops carry their concrete triples.
The result holds the original paths followed by the new ones (deduplicated), and the
entities expanded, which the caller adds to Visited.

API:
    extract_entities(paths, visited) -> list[str]
    await node_expand(kg, paths, visited, *, max_entities=50, limit_per_entity=None,
                      max_new_paths=20_000) -> NodeExpansion
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgreason.kg.base import KnowledgeGraph, Neighbor, Triple
from kgreason.pog.paths import path_signature
from kgreason.pog.types import Hop, ReasoningPath


@dataclass
class NodeExpansion:
    paths: list[ReasoningPath]
    new_paths: list[ReasoningPath]
    expanded: list[str]
    bounds_hit: list[str] = field(default_factory=list)


def _node_sets(p: ReasoningPath) -> list[tuple[str, ...]]:
    if not p.hops:
        return []
    return [p.hops[0].src, *(h.dst for h in p.hops)]


def extract_entities(paths: Sequence[ReasoningPath], visited: set[str]) -> list[str]:
    out: dict[str, None] = {}
    for p in paths:
        for s in _node_sets(p):
            for e in s:
                if e not in visited:
                    out.setdefault(e)
    return list(out)


async def node_expand(
    kg: KnowledgeGraph,
    paths: Sequence[ReasoningPath],
    visited: set[str],
    *,
    max_entities: int = 50,
    limit_per_entity: int | None = None,
    max_new_paths: int = 20_000,
) -> NodeExpansion:
    todo = extract_entities(paths, visited)
    bounds: list[str] = []
    if len(todo) > max_entities:
        bounds.append(
            f"node expand: {len(todo)} unvisited entities, expanded the first {max_entities}"
        )
        todo = todo[:max_entities]
    if not todo:
        return NodeExpansion(list(paths), [], [], bounds)
    nbrs: dict[str, list[Neighbor]] = await kg.neighbors(todo, limit_per_entity=limit_per_entity)
    expanded = set(todo)
    seen = {path_signature(p) for p in paths}
    new: list[ReasoningPath] = []
    for p in paths:
        sets = _node_sets(p)
        prefix_entities: set[str] = set()
        for i, s in enumerate(sets):
            prefix_entities.update(s)
            members = [e for e in s if e in expanded]
            groups: dict[tuple[str, bool], dict[str, list[Triple]]] = defaultdict(
                lambda: defaultdict(list)
            )
            for e in members:
                for n in nbrs.get(e, []):
                    if n.entity in prefix_entities:
                        continue
                    groups[(n.relation, n.direction == "tail")][e].append(n.triple(e))
            # relation clustering, as in paths.py: keys joining the same two sets are one hop
            clustered: dict[tuple[tuple[str, ...], tuple[str, ...]], list] = {}
            for (rel, fwd), by_src in sorted(groups.items()):
                triples = [t for ts in by_src.values() for t in ts]
                dst = tuple(sorted({t.tail if fwd else t.head for t in triples}))
                entry = clustered.setdefault((tuple(sorted(by_src)), dst), [[], set()])
                entry[0].append((rel, fwd))
                entry[1].update(triples)
            for (src, dst), (keys, triple_set) in clustered.items():
                (rel, fwd), *alts = keys
                hop = Hop(src, rel, dst, fwd, tuple(sorted(triple_set)), tuple(alts))
                q = ReasoningPath((*p.hops[:i], hop), p.entity_list)
                sig = path_signature(q)
                if sig in seen:
                    continue
                if len(new) >= max_new_paths:
                    bounds.append(f"node expand: max_new_paths={max_new_paths} reached")
                    return NodeExpansion([*paths, *new], new, todo, bounds)
                seen.add(sig)
                new.append(q)
    return NodeExpansion([*paths, *new], new, todo, bounds)
