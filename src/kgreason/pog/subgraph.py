"""Question subgraph detection (PoG section 4.1): the D_max-hop neighbourhood of every topic
entity, fetched through `KnowledgeGraph.expand` so it works on any backend.

The size bound is `PoGSettings.max_subgraph_triples`; when the backend stops at it, the
returned `QuestionSubgraph` says so (`truncated`, `truncation_reason`) and `bounds_hit()`
names it, so the pipeline can put it in `PoGResult.bounds_hit`. Nothing is dropped silently.
None is no cap (the paper's setting): a bound no KG reaches is passed instead (`subgraph_cap`).

API:
    await detect_subgraph(kg, topic_ids, settings, depth=None) -> QuestionSubgraph
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

import numpy as np

from kgreason.kg.base import KnowledgeGraph, Triple
from kgreason.kg.store.walk import sort_edge_ids
from kgreason.kg.store.walks import WalkKey
from kgreason.pog.settings import PoGSettings

if TYPE_CHECKING:
    from kgreason.kg.store.graph import Expansion
    from kgreason.kg.store.kg import StoreKG


class StoreTriples(Sequence[Triple]):
    """A store subgraph's triples as edge ids; Triple objects (sorted) are built only when
    someone reads them, since the array fast path (pog/arrays/graph.py) never needs them.
    `eids` are sorted on first read (a walk gives them in discovery order)."""

    def __init__(self, kg: StoreKG, eids: np.ndarray, *, is_sorted: bool = True):
        self.kg, self._eids, self._sorted = kg, eids, is_sorted
        self._rows: list[Triple] | None = None

    @property
    def eids(self) -> np.ndarray:
        if not self._sorted:
            self._eids, self._sorted = sort_edge_ids(self._eids, self.kg.graph.n_edges), True
        return self._eids

    def _all(self) -> list[Triple]:
        if self._rows is None:
            self._rows = self.kg.triples_of(self.eids, sort=True)
        return self._rows

    def __len__(self) -> int:
        return len(self._eids)

    @overload
    def __getitem__(self, i: int) -> Triple: ...
    @overload
    def __getitem__(self, i: slice) -> list[Triple]: ...
    def __getitem__(self, i: int | slice) -> Triple | list[Triple]:
        return self._all()[i]

    def __iter__(self) -> Iterator[Triple]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        return list(self._all()) == other if isinstance(other, list) else other is self


#: the cap `max_subgraph_triples = None` gives a backend with no edge count to hand: more
#: than any KG holds, and twice it still fits an int64 (a store's walk doubles its budget)
UNCAPPED = 1 << 60


def subgraph_cap(settings: PoGSettings, n_edges: int | None = None) -> int:
    """The bound to expand with: the setting, or when it is None every edge there is."""
    cap = settings.max_subgraph_triples
    if cap is not None:
        return cap
    return UNCAPPED if n_edges is None else max(1, n_edges)


class EmptySubgraphError(ValueError):
    """No topic entity has any edge in the KG (the question cannot be explored)."""


@dataclass
class QuestionSubgraph:
    topics: tuple[str, ...]
    triples: Sequence[Triple]
    depth: int
    truncated: bool = False
    truncation_reason: str = ""
    #: topic ids the KG does not know (no name and no edge)
    unknown_topics: list[str] = field(default_factory=list)
    #: what the bound left out, when the backend can tell (local stores)
    cut_detail: str = ""
    #: the walk a subset store recorded from its full store, replayed (kg/store/walks.py)
    replayed: bool = False

    def entities(self) -> set[str]:
        out = set(self.topics)
        for t in self.triples:
            out.add(t.head)
            out.add(t.tail)
        return out

    def bounds_hit(self) -> list[str]:
        if not self.truncated:
            return []
        detail = f"; {self.cut_detail}" if self.cut_detail else ""
        how = " (the full store's walk, replayed by this subset)" if self.replayed else ""
        return [
            f"subgraph: {self.truncation_reason or 'truncated'} (depth {self.depth}){detail}{how}"
        ]


async def detect_subgraph(
    kg: KnowledgeGraph,
    topic_ids: Sequence[str],
    settings: PoGSettings,
    *,
    depth: int | None = None,
) -> QuestionSubgraph:
    """Fetch the `depth` (default `settings.d_max`) hop neighbourhood of all topic entities.

    One `expand` call over all seeds: the union of the per-entity neighbourhoods is the same
    set of nodes, and a shared bound keeps the total size under control.
    """
    topics = tuple(dict.fromkeys(topic_ids))
    d = settings.d_max if depth is None else depth
    known = await kg.names(list(topics))
    sub = await kg.expand(list(topics), d, max_triples=subgraph_cap(settings))
    touched = {x for t in sub.triples for x in (t.head, t.tail)}
    unknown = [t for t in topics if t not in known and t not in touched]
    return QuestionSubgraph(
        topics=topics,
        triples=list(sub.triples),
        depth=d,
        truncated=sub.truncated,
        truncation_reason=sub.truncation_reason,
        unknown_topics=unknown,
    )


def detect_subgraph_store(
    kg: StoreKG, topic_ids: Sequence[str], settings: PoGSettings, *, depth: int | None = None
) -> tuple[QuestionSubgraph, np.ndarray]:
    """detect_subgraph on a local store without building Triple objects: the same edges
    (CSRGraph.expand is MemoryKG.expand's rule), returned as edge ids (sorted) beside the
    subgraph."""
    sub, _ = walk_subgraph(kg, topic_ids, settings, depth=depth)
    assert isinstance(sub.triples, StoreTriples)
    return sub, sub.triples.eids


def walk_subgraph(
    kg: StoreKG, topic_ids: Sequence[str], settings: PoGSettings, *, depth: int | None = None
) -> tuple[QuestionSubgraph, Expansion]:
    """detect_subgraph_store with the walk's result as it came: edge ids in discovery order
    and the rows that took them (`Expansion.rows`, which pog/arrays/build.from_store takes);
    nothing here sorts."""
    topics = tuple(dict.fromkeys(topic_ids))
    d = settings.d_max if depth is None else depth
    nodes = kg.node_ids(list(topics))
    known = (nodes >= 0).tolist()
    # a topic without edges is still known when the store has its name
    unknown = [x for x, k in zip(topics, known, strict=True) if not k]
    grouped = settings.subgraph_bound == "relation-aware"
    replayed = None
    if len(kg.walks):  # a subset store replays the full store's walk (kg/store/walks.py)
        replayed = kg.walks.replay(kg.graph, walk_key(kg, topics, known, d, settings))
    if replayed is not None:
        res = replayed[0]
    else:
        expand = kg.graph.expand_grouped if grouped else kg.graph.expand
        res = expand(nodes[nodes >= 0], d, subgraph_cap(settings, kg.graph.n_edges))
    sub = QuestionSubgraph(
        topics=topics,
        triples=StoreTriples(kg, res.eids, is_sorted=False),
        depth=d,
        truncated=res.truncated,
        truncation_reason=res.reason,
        unknown_topics=unknown,
    )
    if replayed is not None:
        sub.cut_detail = replayed[1]
        sub.replayed = True
    elif res.truncated:
        sub.cut_detail = _grouped_detail(kg, res) if grouped else _edge_order_detail(res, d)
    return sub, res


def walk_key(
    kg: StoreKG, topics: Sequence[str], known: Sequence[bool], depth: int, settings: PoGSettings
) -> WalkKey:
    """What decides walk_subgraph's walk (a subset store looks its recorded walks up by it)."""
    seeds = tuple(x for x, k in zip(topics, known, strict=True) if k)
    cap, bound = settings.max_subgraph_triples, settings.subgraph_bound
    return WalkKey(seeds, depth, cap, bound, kg.noise_prefixes)


#: truncated groups named in a cut report, at most (the rest are counted)
DETAIL_GROUPS = 8


def _edge_order_detail(res: Expansion, d: int) -> str:
    return (
        f"cut at hop {res.cut_hop}: up to {res.unread_edges:,} edges of that hop not read"
        + (
            f" ({'' if res.left_out_exact else 'at least '}{res.left_out_relations:,} relations,"
            f" {res.left_out_entities:,} entities not reached)"
        )
        + (f", hops {res.cut_hop + 1}..{d} not explored" if res.cut_hop < d else "")
    )


def _grouped_detail(kg: StoreKG, res: Expansion) -> str:
    """Which relation-path groups each cut hop truncated (the steps from the topic, then
    kept/total edges of the last step)."""
    parts = []
    summary = res.group_table.summary(DETAIL_GROUPS) if res.group_table is not None else []
    for hop, n, dropped, gs in summary:
        named = ", ".join(
            "".join(f"{kg.relations[r]} ({'out' if o else 'in'}) > " for r, o in g.via)
            + f"{kg.relations[g.rel]} ({'out' if g.out else 'in'}) {g.kept:,}/{g.total:,}"
            for g in gs
        )
        more = f" and {n - DETAIL_GROUPS} more" if n > DETAIL_GROUPS else ""
        drop = f"; {dropped} groups got no edge" if dropped else ""
        parts.append(f"hop {hop}: {n} relation groups truncated ({named}{more}{drop})")
    unread = f"; {res.unread_rows:,} hub rows not read" if res.unread_rows else ""
    return f"relation-aware cut, {res.unread_edges:,} edges left out: " + "; ".join(parts) + unread
