"""EntityPathFind (Algorithm 1): entity paths over the clustered question subgraph.

An entity path for the list [e1, ..., ek] runs e1 -> ... -> e2 -> ... -> ek through every
entity in the given order (Definition 2). Its length is the number of hops. Two conditions:
    topic-entity paths (section 4.2):  k*(D-1) < length <= k*D    -> `topic_entity_paths`
    supplement paths:                  length <= |Topic| * D_max  -> `supplement_paths`
A single entity [e1] has nothing to connect: its paths start at e1, satisfy the length
condition and end anywhere (the answer is in the end set; most MetaQA questions).

Search (over supernodes, see clustering.py): a partial path is a relation sequence with the
set reached after each hop; a hop from set S via (relation, direction) reaches the union of
the members' neighbours. Between two consecutive list entities s -> t the search is
bidirectional: a backward BFS from t gives every node's distance to t, and the forward
expansion from s keeps only nodes that can still reach t within the remaining length. A found
segment is then restricted backwards to the members that really lie on a chain ending at t,
so every hop of a connecting path holds only entities on s..t chains.

Relation clustering: relations that lead from the current set to exactly the same set (e.g.
Freebase's `containedby` and the inverse `contains`) form ONE hop, the first relation in
sorted order as `Hop.relation` and the others in `Hop.alt_relations`; without it every
inverse pair doubles the number of paths per hop (Figure 1 fixture, D=3: 6768 -> 176).

Rules not in the paper:
- no immediate backtracking: a hop that reverses the previous hop (same relation, opposite
  direction, for any relation of the previous hop) does not return to the previous hop's
  source entities ("films that share a
  director with X" exclude X); a hop left empty is not taken;
- a path from ONE entity never reaches it again. With `revisit_when_empty` (Budget's; off
  unless PoGSettings.revisits() says on: "auto" turns it on for a zero-shot ranking in the
  LLM-free mode, pog/llm_free.py) a step that these two exclusions leave empty reaches
  what they excluded (its set before them) instead of being dropped: X -> P -> X when X
  is P's only child, so PathQuestion's "the child of X's parent" and X -> P -> X -> Z
  chains exist; with a sibling Y the step reaches Y only, as without the flag. Relation
  clustering groups by the set finally reached; segments (several entities) keep both
  exclusions;
- a segment never passes through its own start again, nor through its target before its end,
  nor through the other entities of the list (the order of the list is the order on the path);
- paths come out shortest first, then by relation sequence (deterministic);
- at most `max_paths` complete paths (and partial paths per level) are kept; when that bound
  stops the search, `PathSearch.bound_hit` is True and `bound_reason` names it;
- a level whose partial paths would read more than `max_level_rows` edge rows (the degrees
  of the members of their sets, summed over the partial paths) is not searched: the search
  keeps what the shorter lengths found and says so in `bound_reason`. Without it a
  two-topic question on a 10M-triple KG read 60M rows per level (seconds to minutes each)
  to produce paths that `max_paths` then cut anyway (docs/scale.md). A segment search
  names the FIRST partial paths of the level whose rows already pass the bound (so the
  array search can stop making that level's partial paths there: the rest of the length
  before is read for its found segments only), and this bound is the one reported when
  the level was also cut to `max_paths` partial paths (a level not searched is not cut).

This module is the reference search. `single_entity_paths`, `segment_paths` and
`ordered_paths` are operations of pog/backend.py: a faster form of the graph (the integer
arrays of a local store, kgreason.pog.arrays) runs the same search its own way, a whole
level of partial paths per vectorised step; results, order, bounds and reasons are the
same (tests/pog/test_fastgraph_paths.py).

Concrete triples: a hop from a hub set can stand for tens of thousands of triples, so hops
are built WITHOUT triples; `PathSearch.materialize(paths)` fills `Hop.triples` for the paths
you keep (do this before citing paths or checking faithfulness).

API:
    length_window(n_topics, depth) -> (min_len, max_len)
    topic_entity_paths(graph, entity_list, depth, *, max_paths, max_level_rows,
                       revisit_when_empty) -> PathSearch
    supplement_paths(graph, entity_list, *, n_topics, d_max, max_paths, max_level_rows,
                     revisit_when_empty)
    find_entity_paths(graph, entity_list, *, min_len, max_len, max_paths, max_level_rows,
                      revisit_when_empty)
    PathSearch.materialize(paths) -> list[ReasoningPath];  path_signature(path) -> hashable
    Budget(max_paths, max_level_rows, revisit_when_empty): pog/path_budget.py
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from kgreason.pog.backend import dispatch
from kgreason.pog.clustering import ClusteredGraph, Key
from kgreason.pog.path_budget import Budget
from kgreason.pog.reduction import bfs_distances
from kgreason.pog.settings import MAX_LEVEL_ROWS
from kgreason.pog.types import Hop, ReasoningPath


def length_window(n_topics: int, depth: int) -> tuple[int, int]:
    """Inclusive bounds of |Topic|*(D-1) < length <= |Topic|*D."""
    return n_topics * (depth - 1) + 1, n_topics * depth


def path_signature(path: ReasoningPath) -> tuple:
    return tuple((h.src, h.relation, h.forward, h.dst) for h in path.hops)


@dataclass
class PathSearch:
    #: a list, or a backend's collection (made when read: kgreason.pog.arrays.table)
    paths: Sequence[ReasoningPath]
    entity_list: tuple[str, ...]
    min_len: int
    max_len: int
    graph: ClusteredGraph
    bound_hit: bool = False
    bound_reason: str = ""
    #: clustered expansions performed (a measure of work)
    expansions: int = 0
    missing: list[str] = field(default_factory=list)

    def bounds_hit(self) -> list[str]:
        return [f"path search: {self.bound_reason}"] if self.bound_hit else []

    def materialize(self, paths: Sequence[ReasoningPath]) -> list[ReasoningPath]:
        return materialize(self.graph, paths)


def materialize(graph: ClusteredGraph, paths: Sequence[ReasoningPath]) -> list[ReasoningPath]:
    """Fill each hop's concrete KG triples (hops that already have them are kept)."""
    out = []
    for p in paths:
        hops = tuple(
            h
            if h.triples
            else Hop(
                h.src,
                h.relation,
                h.dst,
                h.forward,
                tuple(
                    sorted(
                        {t for k in h.relation_keys() for t in graph.hop_triples(h.src, k, h.dst)}
                    )
                ),
                h.alt_relations,
            )
            for h in p.hops
        )
        out.append(ReasoningPath(hops, p.entity_list))
    return out


#: keys joining the same two sets, the primary (first in sorted order) first
_Group = tuple[Key, ...]
#: the hops of one path, before it becomes a ReasoningPath
Chain = tuple[Hop, ...]


def _hop(src: Iterable[str], group: _Group, dst: Iterable[str]) -> Hop:
    (rel, fwd), *alts = group
    return Hop(tuple(sorted(src)), rel, tuple(sorted(dst)), fwd, (), tuple(alts))


def _rows(graph: ClusteredGraph, nodes: Iterable[str]) -> int:
    """Edge rows a step from `nodes` reads (both directions, as the array search counts)."""
    adj = graph.adj
    return sum(len(v) for n in nodes for v in adj.get(n, {}).values())


def _steps(
    graph: ClusteredGraph,
    groups: tuple[_Group, ...],
    sets: tuple,
    keep: Callable[[str], bool] | None = None,
    revisit: bool = False,
) -> list[tuple[_Group, set[str]]]:
    """The clustered steps from sets[-1]: relations reaching the same set are one step
    (relation clustering); backtracking and `keep` filters applied; empty steps dropped,
    or, with `revisit`, a step they empty reaches what it reached before them."""
    back = {(r, not f) for r, f in groups[-1]} if groups else set()
    by_set: dict[frozenset[str], list[Key]] = {}
    for key, reached in sorted(graph.expand_all(sets[-1]).items()):
        before = reached.copy() if revisit else reached
        if key in back:
            reached.difference_update(sets[-2])
        if keep is not None:
            reached = {v for v in reached if keep(v)}
        if revisit and not reached:
            reached = before
        if reached:
            by_set.setdefault(frozenset(reached), []).append(key)
    return sorted(((tuple(ks), set(fs)) for fs, ks in by_set.items()), key=lambda x: x[0])


def _free_paths(
    graph: ClusteredGraph, start: str, min_len: int, max_len: int, budget: Budget
) -> list[tuple[Hop, ...]]:
    """Paths from `start` with min_len <= length <= max_len, ending anywhere."""
    found: list[tuple[Hop, ...]] = []
    frontier: list[tuple[tuple[_Group, ...], tuple, tuple[Hop, ...]]] = [((), ({start},), ())]
    for k in range(1, max_len + 1):
        rows = sum(_rows(graph, sets[-1]) for _, sets, _ in frontier)
        if budget.level_too_big(rows, len(frontier), k, f"from {start}"):
            return found
        nxt = []
        for groups, sets, hops in frontier:
            budget.expansions += 1
            steps = _steps(graph, groups, sets, lambda v: v != start, budget.revisit_when_empty)
            for group, reached in steps:
                hop_chain = (*hops, _hop(sets[-1], group, reached))
                if k >= min_len:
                    if len(found) >= budget.max_paths:
                        budget.stop(f"max_paths={budget.max_paths} reached at length {k}")
                        return found
                    found.append(hop_chain)
                if k < max_len:
                    nxt.append(((*groups, group), (*sets, reached), hop_chain))
        if len(nxt) > budget.max_paths:
            budget.stop(f"max_paths={budget.max_paths} partial paths at length {k}")
            nxt = nxt[: budget.max_paths]
        frontier = nxt
    return found


@dispatch
def segment_paths(
    graph: ClusteredGraph,
    s: str,
    t: str,
    max_len: int,
    budget: Budget,
    avoid: frozenset[str] = frozenset(),
) -> list[tuple[Hop, ...]]:
    """Connecting paths s -> t of length 1..max_len, restricted to s..t chains, never
    passing through `avoid` (the other entities of the list)."""
    dist_t = bfs_distances(graph, t, max_len)
    if s not in dist_t:
        return []
    found: list[tuple[Hop, ...]] = []
    frontier: list[tuple[tuple[_Group, ...], tuple]] = [((), (frozenset({s}),))]
    cut = ""  # the partial-path bound of the level before, reported unless this one is too big
    for k in range(1, max_len + 1):
        rows = (_rows(graph, sets[-1]) for _, sets in frontier)
        if budget.level_prefix_too_big(rows, k, f"({s} -> {t})"):
            return found
        if cut:
            budget.stop(cut)
        nxt = []
        left = max_len - k

        def keep(v: str, left: int = left) -> bool:
            return dist_t.get(v, left + 1) <= left and v != s and v not in avoid

        for groups, sets in frontier:
            budget.expansions += 1
            for group, reached in _steps(graph, groups, sets, keep):
                if t in reached:
                    if len(found) >= budget.max_paths:
                        budget.stop(f"max_paths={budget.max_paths} reached ({s} -> {t})")
                        return found
                    found.append(_restrict(graph, (*groups, group), (*sets, reached), t))
                    reached = reached - {t}
                if reached and k < max_len:
                    nxt.append(((*groups, group), (*sets, reached)))
        cut = ""
        if len(nxt) > budget.max_paths:
            cut = f"max_paths={budget.max_paths} partial paths ({s} -> {t}, length {k})"
            nxt = nxt[: budget.max_paths]
        frontier = nxt
    return found  # (the last length makes no partial paths: `cut` is empty)


def _restrict(
    graph: ClusteredGraph, groups: tuple[_Group, ...], sets: tuple, t: str
) -> tuple[Hop, ...]:
    """Keep only the members of each set that lie on a chain ending at t."""
    kept: list[set[str]] = [set() for _ in sets]
    kept[-1] = {t}
    adj = graph.adj
    for j in range(len(groups) - 1, -1, -1):
        nxt = kept[j + 1]
        kept[j] = {
            u for u in sets[j] if any(v in nxt for key in groups[j] for v in adj[u].get(key, ()))
        }
    return tuple(_hop(kept[j], groups[j], kept[j + 1]) for j in range(len(groups)))


@dispatch
def single_entity_paths(
    graph: ClusteredGraph, start: str, min_len: int, max_len: int, budget: Budget
) -> Sequence[ReasoningPath]:
    """The paths from one entity (min_len <= length <= max_len, ending anywhere), in
    `ordered_paths`' order."""
    return ordered_paths(graph, _free_paths(graph, start, min_len, max_len, budget), (start,))


@dispatch
def ordered_paths(
    graph: ClusteredGraph, chains: list[Chain], entity_list: tuple[str, ...]
) -> list[ReasoningPath]:
    """The chains as paths: shortest first, then by relation sequence (deterministic)."""
    chains = sorted(chains, key=lambda c: (len(c), [(h.relation, not h.forward) for h in c]))
    return [ReasoningPath(c, entity_list) for c in chains]


def find_entity_paths(
    graph: ClusteredGraph,
    entity_list: Sequence[str],
    *,
    min_len: int,
    max_len: int,
    max_paths: int,
    max_level_rows: int | None = MAX_LEVEL_ROWS,
    revisit_when_empty: bool = False,
) -> PathSearch:
    ents = tuple(dict.fromkeys(entity_list))  # a repeated entity (predicted = topic) once
    budget = Budget(max_paths, max_level_rows, revisit_when_empty)
    missing = [e for e in ents if e not in graph]
    result = PathSearch([], ents, min_len, max_len, graph, missing=missing)
    if not ents or missing or max_len < 1:
        return result
    if len(ents) == 1:
        result.paths = single_entity_paths(graph, ents[0], max(min_len, 1), max_len, budget)
    else:
        seg_max = max_len - (len(ents) - 2)
        chains: list[Chain] = [()]
        for i in range(len(ents) - 1):
            avoid = frozenset(ents) - {ents[i], ents[i + 1]}
            segs = segment_paths(graph, ents[i], ents[i + 1], seg_max, budget, avoid)
            left = len(ents) - 2 - i  # segments still to add, each at least 1 hop
            combined: list[Chain] = []
            for prefix in chains:
                for seg in segs:
                    if len(prefix) + len(seg) + left <= max_len:
                        if len(combined) >= max_paths:
                            budget.stop(f"max_paths={max_paths} combining segments")
                            break
                        combined.append(prefix + seg)
            chains = combined
            if not chains:
                break
        chains = [c for c in chains if min_len <= len(c) <= max_len]
        result.paths = ordered_paths(graph, chains, ents)
    result.bound_hit, result.bound_reason = budget.hit, budget.reason
    result.expansions = budget.expansions
    return result


def topic_entity_paths(
    graph: ClusteredGraph,
    entity_list: Sequence[str],
    depth: int,
    *,
    max_paths: int,
    max_level_rows: int | None = MAX_LEVEL_ROWS,
    revisit_when_empty: bool = False,
) -> PathSearch:
    """Paths_t of section 4.2: |Topic|*(D-1) < length <= |Topic|*D."""
    lo, hi = length_window(len(entity_list), depth)
    return find_entity_paths(
        graph,
        entity_list,
        min_len=lo,
        max_len=hi,
        max_paths=max_paths,
        max_level_rows=max_level_rows,
        revisit_when_empty=revisit_when_empty,
    )


def supplement_paths(
    graph: ClusteredGraph,
    entity_list: Sequence[str],
    *,
    n_topics: int,
    d_max: int,
    max_paths: int,
    max_level_rows: int | None = MAX_LEVEL_ROWS,
    revisit_when_empty: bool = False,
) -> PathSearch:
    """Paths_s of section 4.2: length <= |Topic|*D_max for List_S = Topic + predicted entity."""
    return find_entity_paths(
        graph,
        entity_list,
        min_len=1,
        max_len=n_topics * d_max,
        max_paths=max_paths,
        max_level_rows=max_level_rows,
        revisit_when_empty=revisit_when_empty,
    )
