"""A toy form of PoG's question graph, added through pog/backend.py's interface only: the
reference graph's data, and a backend that memoises the BFS distances a search asks for
again and again (every segment search reads its target's distances) and counts every
operation it is asked for. No stage module knows it exists."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgreason.pog import paths, reduction
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.paths import Budget, Chain
from kgreason.pog.types import ReasoningPath


@dataclass(eq=False)
class ToyGraph(ClusteredGraph):
    """The reference data; `backend` names the toy's operations."""

    backend: Any = field(default=None, repr=False)

    @classmethod
    def of(cls, graph: ClusteredGraph, backend: MemoBackend) -> ToyGraph:
        return cls(adj=graph.adj, variant=graph.variant, isolated=graph.isolated, backend=backend)


class MemoBackend:
    """Implements four of Backend's operations; the stages run the reference for the rest."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.memo: dict[tuple[str, int], Mapping[str, int]] = {}

    def bfs_distances(self, graph: ToyGraph, source: str, max_depth: int) -> Mapping[str, int]:
        self.calls["bfs_distances"] += 1
        key = (source, max_depth)
        if key not in self.memo:
            self.memo[key] = reduction.bfs_distances.reference(graph, source, max_depth)  # type: ignore[attr-defined]
        return self.memo[key]

    def connecting_subgraph(
        self, graph: ToyGraph, topics: list[str], max_len: int
    ) -> ToyGraph | None:
        """The reference's keep set, the result kept in this form (so its paths are too)."""
        self.calls["connecting_subgraph"] += 1
        got = reduction.connecting_subgraph.reference(graph, topics, max_len)  # type: ignore[attr-defined]
        self.memo.clear()  # distances belong to the graph they were read on
        return None if got is None else ToyGraph.of(got, self)

    def single_entity_paths(
        self, graph: ToyGraph, start: str, min_len: int, max_len: int, budget: Budget
    ) -> Sequence[ReasoningPath]:
        self.calls["single_entity_paths"] += 1
        return paths.single_entity_paths.reference(graph, start, min_len, max_len, budget)  # type: ignore[attr-defined]

    def segment_paths(
        self,
        graph: ToyGraph,
        s: str,
        t: str,
        max_len: int,
        budget: Budget,
        avoid: frozenset[str],
    ) -> list[Chain]:
        self.calls["segment_paths"] += 1
        return paths.segment_paths.reference(graph, s, t, max_len, budget, avoid)  # type: ignore[attr-defined]
