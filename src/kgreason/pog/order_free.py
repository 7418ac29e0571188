"""LLM-free multi-entity answering that does not depend on the order of the topic entities.

PoG's entity paths run through the topic entities in the order the LLM's question analysis
gives. Without an LLM there is no such order, and the order the entities happen to be found
in changed the answer (22 of 100 two-entity football questions). So:
- `order_free_paths` searches the entity paths for EVERY order of the topics (up to
  `MAX_PERMUTED` topics; above, the given order only) and keeps each path once, oriented
  by the order the QUESTION mentions the topics in (`mention_order`, ids for the rest):
  the pool of paths, and the texts the fuzzy selector scores, are the same whatever the
  order the topics were given or found in;
- `member_support` ranks the members of a path's sets by relevance: the number of KG chains
  of this path's relation sequence that pass through the member (from the start set, and
  into the end topic for entity paths), so a middle set of 161 entities is not read in
  alphabetical order before a candidate cap applies.

Keeping each path once across the orders (`merge_orders`) is an operation of
pog/backend.py: the array form of a local store orients and deduplicates on ids and builds
only the paths kept (kgreason.pog.arrays.orient), with the same paths in the same order.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kgreason.kg.ranking import normalize_name
from kgreason.pog.backend import dispatch
from kgreason.pog.clustering import ClusteredGraph, Key
from kgreason.pog.paths import PathSearch, path_signature, supplement_paths
from kgreason.pog.settings import MAX_LEVEL_ROWS
from kgreason.pog.types import Hop, ReasoningPath

#: 4 topics = 24 orders; above that the given order alone (the search cost grows with k!)
MAX_PERMUTED = 4


def reverse_hop(h: Hop) -> Hop:
    return h.reversed()


def reverse_path(p: ReasoningPath) -> ReasoningPath:
    return ReasoningPath(
        tuple(reverse_hop(h) for h in reversed(p.hops)), tuple(reversed(p.entity_list))
    )


def mention_order(names: Mapping[str, str], question: str) -> list[str]:
    """Topic ids (id -> name) in the order the question mentions them (normalised text),
    unmentioned ones after, by id: fixed by the question, whatever order they came in."""
    q = f" {normalize_name(question)} "

    def pos(tid: str) -> tuple[int, str]:
        for text in (names.get(tid) or tid, tid):
            i = q.find(f" {normalize_name(text)} ")
            if i >= 0:
                return i, tid
        return len(q), tid

    return sorted(names, key=pos)


def orient(
    p: ReasoningPath,
    topics: Sequence[str],
    signature: Callable[[ReasoningPath], tuple] | None = None,
) -> ReasoningPath:
    """The orientation that meets `topics` in their order as far as possible (the first
    one earliest); a tie keeps the smaller signature, so the result is deterministic.
    `signature` (default path_signature) may be any signature ordered exactly like it (the
    array form's id_signature, which decodes no set)."""
    sig = signature or path_signature
    order = {t: i for i, t in enumerate(topics)}
    # the sets along the path (Hop.side: a fast form's sets are not decoded)
    seq: list[Any] = []
    if p.hops:
        seq = [p.hops[0].side(False), *(h.side(True) for h in p.hops)]

    def ranks(sets: list[Any]) -> tuple[int, ...]:
        return tuple(order[s[0]] for s in sets if len(s) == 1 and s[0] in order)

    r = reverse_path(p)
    if (ranks(seq), sig(p)) <= (ranks(seq[::-1]), sig(r)):
        return p
    return r


def order_free_paths(
    graph: ClusteredGraph,
    topics: Sequence[str],
    *,
    d_max: int,
    max_paths: int,
    reference: Sequence[str] | None = None,
    max_level_rows: int | None = MAX_LEVEL_ROWS,
    revisit_when_empty: bool = False,
) -> PathSearch:
    """Supplement-condition entity paths (length <= |Topic| * D_max) through all topics, for
    every order of them, each path once, oriented by `reference` (default: ids sorted; use
    `mention_order`), shortest first."""
    ents = list(dict.fromkeys(topics))
    if len(ents) <= 1:  # nothing to order: free paths from the one topic entity
        return supplement_paths(
            graph,
            ents,
            n_topics=len(ents),
            d_max=d_max,
            max_paths=max_paths,
            max_level_rows=max_level_rows,
            revisit_when_empty=revisit_when_empty,
        )
    orders = (
        list(itertools.permutations(sorted(ents))) if len(ents) <= MAX_PERMUTED else [tuple(ents)]
    )
    ref = tuple(reference or sorted(ents))
    found: list[Sequence[ReasoningPath]] = []
    first: PathSearch | None = None
    bound_reasons: list[str] = []
    expansions = 0
    for order in orders:
        res = supplement_paths(
            graph,
            list(order),
            n_topics=len(ents),
            d_max=d_max,
            max_paths=max_paths,
            max_level_rows=max_level_rows,
            revisit_when_empty=revisit_when_empty,
        )
        first = first or res
        expansions += res.expansions
        if res.bound_hit:
            bound_reasons.append(res.bound_reason)
        found.append(res.paths)
    assert first is not None
    paths, n_found = merge_orders(graph, found, ref, max_paths)
    return PathSearch(
        paths,
        ref,
        first.min_len,
        first.max_len,
        graph,
        bound_hit=bool(bound_reasons) or n_found > max_paths,
        bound_reason="; ".join(dict.fromkeys(bound_reasons))
        or (f"max_paths={max_paths} over all topic orders" if n_found > max_paths else ""),
        expansions=expansions,
        missing=first.missing,
    )


@dispatch
def merge_orders(
    graph: ClusteredGraph,
    found: list[Sequence[ReasoningPath]],
    reference: tuple[str, ...],
    max_paths: int,
) -> tuple[list[ReasoningPath], int]:
    """The paths of every order, each once (by path_signature, oriented by `reference`),
    shortest first, then by signature; the first max_paths, and how many distinct."""
    kept: dict[tuple, ReasoningPath] = {}
    for paths in found:
        for p in paths:
            c = orient(ReasoningPath(p.hops, reference), reference)
            kept.setdefault(path_signature(c), c)
    order = sorted(kept, key=lambda k: (len(k), k))
    return [kept[k] for k in order[:max_paths]], len(kept)


def _push(graph: ClusteredGraph, h: Hop, weight: dict[str, float]) -> dict[str, float]:
    """Chains reaching each member of h.dst: the sum over its predecessors in h.src."""
    dst = set(h.dst)
    out: dict[str, float] = dict.fromkeys(h.dst, 0.0)
    graph_adj = graph.adj  # (an array graph makes a view per read)
    for u in h.src:
        w = weight.get(u, 0.0)
        if not w:
            continue
        adj = graph_adj.get(u, {})
        reached: set[str] = set()
        for key in h.relation_keys():
            reached.update(v for v in adj.get(key, ()) if v in dst)
        for v in reached:
            out[v] += w
    return out


def member_support(graph: ClusteredGraph, path: ReasoningPath) -> list[dict[str, float]]:
    """For each hop's dst set: chains of this path through each member. An entity path
    (ending at a single topic entity) counts chains that also reach its end."""
    if not path.hops:
        return []
    fwd = [dict.fromkeys(path.hops[0].src, 1.0)]
    for h in path.hops:
        fwd.append(_push(graph, h, fwd[-1]))
    if len(path.entity_list) <= 1:
        return fwd[1:]
    bwd = [dict.fromkeys(path.hops[-1].dst, 1.0)]
    for h in reversed(path.hops):
        bwd.append(_push(graph, reverse_hop(h), bwd[-1]))
    bwd.reverse()
    return [{v: f * bwd[j].get(v, 0.0) for v, f in fwd[j].items()} for j in range(1, len(fwd))]


@dispatch
def ranked_sets(
    graph: ClusteredGraph, path: ReasoningPath, first: int | None
) -> list[Sequence[str]]:
    """Each hop's dst members, most supported first (ties by id): the first `first` of
    each (all when None)."""
    out: list[Sequence[str]] = []
    for h, sup in zip(path.hops, member_support(graph, path), strict=True):

        def key(v: str, sup: dict[str, float] = sup) -> tuple[float, str]:
            return (-sup.get(v, 0.0), v)

        ranked = sorted(h.dst, key=key)
        out.append(ranked if first is None else ranked[:first])
    return out


def ranked_members(graph: ClusteredGraph, path: ReasoningPath, dst_index: int) -> list[str]:
    """Members of hop `dst_index`'s dst set, most supported first (ties by id)."""
    support = member_support(graph, path)[dst_index]
    return sorted(path.hops[dst_index].dst, key=lambda v: (-support.get(v, 0.0), v))


#: name-collision pass (see `collision_path`): entered as a value shared by this many...
COLLECTOR_DEGREE = 50
#: ...and left through a relation it has at most this many edges of...
COLLISION_OTHER_DEGREE = 2
#: ...among at least this many such small relations (a whole second entity on the node)
MERGED_KEYS = 3


@dispatch
def collision_paths(graph: ClusteredGraph, paths: Sequence[ReasoningPath]) -> list[bool]:
    """collision_path of each path (a batch: a backend may share work between them)."""
    return [collision_path(graph, p) for p in paths]


def collision_path(graph: ClusteredGraph, path: ReasoningPath) -> bool:
    """True when the path continues past some step ONLY through nodes that look like two
    things merged into one node: entered as a shared value (>= COLLECTOR_DEGREE entities
    point to it through the entering relation) and left through a DIFFERENT relation it
    has at most COLLISION_OTHER_DEGREE edges of. MetaQA's names are its ids, so the genre
    "War" (442 films point to it by has_genre in a typical question subgraph) is also the
    2007 film "War" (one directed_by edge, to Philip G. Atwell, and a few other film facts),
    and the year "1969" is also a film: paths "genre of X's films -> directed_by" end at Atwell in unrelated questions.
    Only meaningful where names are ids; the caller decides when to apply it."""
    adj = graph.adj  # (an array graph makes a view per read)
    for j in range(len(path.hops) - 1):
        h, nxt = path.hops[j], path.hops[j + 1]
        enter = [(r, not f) for r, f in h.relation_keys()]
        enter_rels = {r for r, _ in enter}
        leave = nxt.relation_keys()
        if {r for r, _ in leave} & enter_rels:
            continue
        going = [v for v in h.dst if any(adj.get(v, {}).get(k) for k in leave)]
        if going and all(_merged(adj.get(v, {}), enter, leave) for v in going):
            return True
    return False


def _merged(adj: Mapping[Key, tuple[str, ...]], enter: list[Key], leave: Sequence[Key]) -> bool:
    """A shared value (entered by >= COLLECTOR_DEGREE edges) that also carries a whole other
    entity: the leaving relation and at least MERGED_KEYS relations in all, each with few
    edges (MetaQA's "War" as a film: directed_by, starred_actors, release_year...). A value
    with one stray fact (PathQuestion's "Male" -> subject_of) is not one."""
    enter_rels = {r for r, _ in enter}
    if max(len(adj.get(k, ())) for k in enter) < COLLECTOR_DEGREE:
        return False
    if sum(len(adj.get(k, ())) for k in leave) > COLLISION_OTHER_DEGREE:
        return False
    few = [
        k for k, ns in adj.items() if k[0] not in enter_rels and len(ns) <= COLLISION_OTHER_DEGREE
    ]
    return len(few) >= MERGED_KEYS
