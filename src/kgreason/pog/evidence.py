"""What a result shows of its paths: each set's first members by relevance, each hop's first
triples, and the full sizes beside them.

Why: a hub question's top path can hold sets of tens of thousands of entities and hops of
a hundred thousand triples. Turning all of them into names, triples and JSON took seconds
and sent 20-35 MB replies that no person reads (and the explorer had to draw). A result
path is instead a bounded view of the path the search found:

- a set's members are ordered by relevance, the number of KG chains of this path's relation
  sequence through the member (`order_free.member_support`: from the start set, and into
  the end topic for entity paths), ties by id; the first `max_members` are kept, and the
  hop's `src_total` / `dst_total` give the full size (None: the set is whole);
- a hop's triples are those between the members shown first (by the dst member's rank,
  then the src member's, then the triple), the first `max_triples` kept, `triples_total`
  the full count;
- None for a bound keeps everything (`kgreason ask --full`), still in relevance order.

The answer set itself is not cut here (`PoGResult.answers`). Every set in full, in the
same relevance order, comes back beside the bounded paths (`Shown.sets`, kept by the result:
`PoGResult.member_sets()`), so a server can page through them (`/v1/results/{id}/sets/{k}`);
the array form keeps them as ids and decodes a page's names only. `shown_paths` is an
operation of pog/backend.py: the array form counts chains and picks triples on ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kgreason.kg.base import Triple
from kgreason.pog.backend import dispatch
from kgreason.pog.clustering import ClusteredGraph, triple_of
from kgreason.pog.order_free import member_support
from kgreason.pog.types import Hop, ReasoningPath

#: members of a set a result shows by default
MAX_MEMBERS = 50
#: triples of a hop a result shows by default
MAX_TRIPLES = 100


@dataclass(frozen=True)
class Shown:
    """Paths as a result shows them, and every set of each in full, in the order shown:
    `sets[p][j]` is path p's set at position j (0: the first hop's src, j + 1: hop j's dst)."""

    paths: list[ReasoningPath]
    sets: list[list[Sequence[str]]] = field(default_factory=list)


def cut(items: Sequence[str], bound: int | None) -> tuple[tuple[str, ...], int | None]:
    """(the first `bound` items, the full count when that cut anything, else None)."""
    if bound is None or len(items) <= bound:
        return tuple(items), None
    return tuple(items[:bound]), len(items)


def _edges(
    graph: ClusteredGraph, h: Hop, rank_s: dict[str, int], rank_d: dict[str, int]
) -> dict[Triple, tuple[int, int]]:
    """Every KG triple of the hop -> (its dst member's rank, its src member's rank)."""
    adj = graph.adj
    out: dict[Triple, tuple[int, int]] = {}
    for k in h.relation_keys():
        for s, rs in rank_s.items():
            for d in adj.get(s, {}).get(k, ()):
                rd = rank_d.get(d)
                if rd is not None:
                    out.setdefault(triple_of(s, k, d), (rd, rs))
    return out


def _by_rank(item: tuple[Triple, tuple[int, int]]) -> tuple:
    t, ranks = item
    return (*ranks, t)


@dispatch
def shown_paths(
    graph: ClusteredGraph,
    paths: Sequence[ReasoningPath],
    max_members: int | None,
    max_triples: int | None,
) -> Shown:
    """Each path as a result shows it, with its sets in full (see the module docstring)."""
    out, sets = [], []
    for p in paths:
        support = member_support(graph, p)
        prev = sorted(p.hops[0].src) if p.hops else []
        hops = []
        whole: list[Sequence[str]] = [tuple(prev)]
        for j, h in enumerate(p.hops):
            sup = support[j]
            dst = sorted(h.dst, key=lambda v: (-sup.get(v, 0.0), v))
            rank_s = {v: i for i, v in enumerate(prev)}
            rank_d = {v: i for i, v in enumerate(dst)}
            triples = [t for t, _ in sorted(_edges(graph, h, rank_s, rank_d).items(), key=_by_rank)]
            src, src_total = cut(prev, max_members)
            shown_dst, dst_total = cut(dst, max_members)
            kept = tuple(triples) if max_triples is None else tuple(triples[:max_triples])
            triples_total = len(triples) if len(kept) < len(triples) else None
            hops.append(
                Hop(
                    src,
                    h.relation,
                    shown_dst,
                    h.forward,
                    kept,
                    h.alt_relations,
                    src_total,
                    dst_total,
                    triples_total,
                )
            )
            prev = dst
            whole.append(tuple(dst))
        out.append(ReasoningPath(tuple(hops), p.entity_list))
        sets.append(whole if p.hops else [])
    return Shown(out, sets)
