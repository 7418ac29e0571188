"""The array form's operations (pog/backend.py's `Backend`), for the graphs and path tables
of this package: each is the reference stage's operation on integer arrays, with the same
result (tests/pog compare both forms on the same graphs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kgreason.pog.arrays import collisions, evidence, search, table_text
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.arrays.hop_maker import make_paths, sort_by_codes
from kgreason.pog.arrays.orient import choose_lazy, oriented_paths
from kgreason.pog.arrays.reduction import connecting_subgraph
from kgreason.pog.arrays.table import TablePaths
from kgreason.pog.evidence import Shown
from kgreason.pog.path_budget import Budget
from kgreason.pog.paths import Chain
from kgreason.pog.types import ReasoningPath


class ArrayBackend:
    """See pog/backend.py's `Backend` for what each operation means."""

    name = "arrays"

    def bfs_distances(
        self, graph: ArrayClusteredGraph, source: str, max_depth: int
    ) -> Mapping[str, int]:
        return graph.distances(source, max_depth)

    def connecting_subgraph(
        self, graph: ArrayClusteredGraph, topics: list[str], max_len: int
    ) -> ArrayClusteredGraph | None:
        return connecting_subgraph(graph, topics, max_len)

    def single_entity_paths(
        self, graph: ArrayClusteredGraph, start: str, min_len: int, max_len: int, budget: Budget
    ) -> Sequence[ReasoningPath]:
        table = search.free_paths(graph, start, min_len, max_len, budget)
        return TablePaths(table, (start,)) if table is not None else []

    def segment_paths(
        self,
        graph: ArrayClusteredGraph,
        s: str,
        t: str,
        max_len: int,
        budget: Budget,
        avoid: frozenset[str],
    ) -> list[Chain]:
        return search.segment_paths(graph, s, t, max_len, budget, avoid)

    def ordered_paths(
        self, graph: ArrayClusteredGraph, chains: list[Chain], entity_list: tuple[str, ...]
    ) -> list[ReasoningPath]:
        # LazyHop key codes (rank * 2 + backward, i.e. code ^ 1) order like the reference's
        # (relation, not forward)
        return make_paths(sort_by_codes(chains), entity_list)

    def merge_orders(
        self,
        graph: ArrayClusteredGraph,
        found: list[Sequence[ReasoningPath]],
        reference: tuple[str, ...],
        max_paths: int,
    ) -> tuple[list[ReasoningPath], int]:
        index = graph.index
        ranks = {u: i for i, t in enumerate(reference) if (u := index.get(t)) is not None}
        chosen, n_found = choose_lazy([p.hops for paths in found for p in paths], ranks, max_paths)
        return oriented_paths(chosen, reference), n_found

    def collision_paths(
        self, graph: ArrayClusteredGraph, paths: Sequence[ReasoningPath]
    ) -> list[bool]:
        return collisions.collision_paths(graph, paths)

    def ranked_sets(
        self, graph: ArrayClusteredGraph, path: ReasoningPath, first: int | None
    ) -> list[Sequence[str]]:
        return evidence.ranked_sets(graph, path, first)

    def shown_paths(
        self,
        graph: ArrayClusteredGraph,
        paths: Sequence[ReasoningPath],
        max_members: int | None,
        max_triples: int | None,
    ) -> Shown:
        return evidence.shown_paths(graph, paths, max_members, max_triples)

    def render_texts(
        self,
        paths: TablePaths,
        names: Mapping[str, str],
        max_items: int | None,
        max_tokens: int | None,
        with_ids: bool,
    ) -> list[str]:
        return table_text.texts(paths.table, names, max_items, max_tokens, with_ids)

    def shown_ids(self, paths: TablePaths, cap: int | None) -> set[str]:
        return table_text.shown_ids(paths.table, cap)

    def shown_names(
        self, graph: ArrayClusteredGraph, paths: Sequence[ReasoningPath], cap: int | None
    ) -> dict[str, str] | None:
        if isinstance(paths, TablePaths):
            return table_text.shown_names(paths.table, cap)
        return table_text.shown_set_names(graph, paths, cap)

    def path_texts(
        self, paths: TablePaths, names: Mapping[str, str], max_items: int
    ) -> table_text.TextTree:
        return table_text.text_tree(paths.table, names, max_items, None, False)


BACKEND = ArrayBackend()
