"""The "add a graph backend" recipe, followed: tests/extending/toy_graph.py is a form of the
question graph (the reference data plus a backend object) written against pog/backend.py
only. Reduction, the order-free path search and rendering run on it, with no stage module
changed, give exactly what the reference form gives, and call the toy's operations."""

from __future__ import annotations

import random

import pytest

from kgreason.kg.base import Triple
from kgreason.pog.backend import OPERATIONS, backend_of
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.order_free import order_free_paths
from kgreason.pog.paths import path_signature, supplement_paths
from kgreason.pog.reduction import reduce_graph
from kgreason.pog.render import render_paths
from tests.extending.toy_graph import MemoBackend, ToyGraph


def graph(seed: int) -> ClusteredGraph:
    rng = random.Random(seed)
    nodes = [f"e{i}" for i in range(40)]
    rels = ["r1", "r2", "r3", "r4"]
    triples = {Triple(rng.choice(nodes), rng.choice(rels), rng.choice(nodes)) for _ in range(140)}
    return ClusteredGraph.from_triples(triples)


def outcome(g: ClusteredGraph, topics: list[str]) -> tuple:
    red = reduce_graph(g, topics, max_len=2 * 3)
    two = order_free_paths(red.graph, topics, d_max=3, max_paths=500)
    one = supplement_paths(red.graph, topics[:1], n_topics=1, d_max=2, max_paths=500)
    names = {e: e.upper() for e in g.entities()}
    return (
        (red.entities_after, red.triples_after, red.reduced, sorted(red.graph.entities())),
        [path_signature(p) for p in two.paths],
        (two.bound_hit, two.bound_reason, two.expansions),
        [path_signature(p) for p in one.paths],
        render_paths(two.paths[:50], names, max_items=3),
        type(red.graph),
    )


@pytest.mark.parametrize("seed", range(6))
def test_the_toy_form_gives_the_reference_results(seed):
    g = graph(seed)
    topics = sorted(g.entities())[:2]
    backend = MemoBackend()
    toy = ToyGraph.of(g, backend)
    ref, got = outcome(g, topics), outcome(toy, topics)
    assert got[:-1] == ref[:-1]
    assert ref[-1] is ClusteredGraph
    if ref[0][2]:  # reduced: the toy kept its form through reduction
        assert got[-1] is ToyGraph
    assert backend.calls["connecting_subgraph"] == 1
    if got[-1] is ToyGraph:
        assert backend.calls["segment_paths"] >= 2  # both topic orders
        assert backend.calls["single_entity_paths"] == 1
        assert backend.calls["bfs_distances"] > len(backend.memo)  # the memo answered some


def test_the_toy_declares_only_backend_operations():
    ops = {n for n in vars(MemoBackend) if not n.startswith("_")}
    assert ops <= OPERATIONS
    assert backend_of(ToyGraph.of(graph(0), MemoBackend())) is not None
    assert backend_of(graph(0)) is None  # the reference form names none
