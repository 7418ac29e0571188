"""The integer-array graph stages (pog/arrays/graph.py, used for local stores) give the same
subgraph, clustered graph, reduction and paths as the generic Triple path (MemoryKG over
the same triples), on a skewed synthetic KG with hubs, inverse pairs, self-loops and noise."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from kgreason.kg.base import Triple
from kgreason.kg.loaders import Source
from kgreason.kg.memory import MemoryKG
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.synthetic import synth_kg, synth_questions
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.graph import prepare_graph
from kgreason.pog.order_free import order_free_paths
from kgreason.pog.paths import path_signature
from kgreason.pog.settings import PoGSettings


@pytest.fixture(scope="module")
def kgs(tmp_path_factory):
    kg = synth_kg(20_000, seed=5)
    d = tmp_path_factory.mktemp("synth")
    kg.write_tsv(d / "kg.tsv")
    rows = [ln.split("\t") for ln in (d / "kg.tsv").read_text().splitlines()]
    extra = []
    for h, r, t in rows[:300]:  # inverse pairs spelled out by name, some mirrored
        extra.append((t, r + "_inverse", h))
    extra += [(rows[0][0], "self", rows[0][0]), (rows[1][0], "type.object.type", "noise_x")]
    extra += [(rows[2][2], "lonely_inverse", rows[3][0])]
    with (d / "kg.tsv").open("a") as f:
        f.writelines("\t".join(x) + "\n" for x in extra)
    triples = [Triple(*x) for x in rows + extra]
    build_store([Source(d / "kg.tsv")], d / "store")
    qs = synth_questions(kg, 10, 6, seed=5, hub_share=0.3)
    return StoreKG(d / "store"), MemoryKG(triples), qs


def _same(store, mem, topics, settings):
    a = asyncio.run(prepare_graph(store, topics, settings))
    b = asyncio.run(prepare_graph(mem, topics, settings))
    assert isinstance(a.clustered, ArrayClusteredGraph)
    assert not isinstance(b.clustered, ArrayClusteredGraph)
    assert a.stats == b.stats
    # the store also says what the cut left out (a suffix the generic path cannot give)
    assert [x.split("; cut at hop")[0] for x in a.bounds_hit] == b.bounds_hit
    assert all("; cut at hop" in x for x in a.bounds_hit)
    assert list(a.subgraph.triples) == list(b.subgraph.triples)
    assert a.subgraph.unknown_topics == b.subgraph.unknown_topics
    assert a.clustered.entities() == b.clustered.entities()
    assert a.clustered.triples() == b.clustered.triples()
    assert a.clustered.clustered_edge_count() == b.clustered.clustered_edge_count()
    assert a.reduction.reduced == b.reduction.reduced
    assert a.reduction.note == b.reduction.note
    assert a.graph.entities() == b.graph.entities()
    assert a.graph.triples() == b.graph.triples()
    for v in sorted(b.graph.entities())[:50]:
        assert a.graph.adj.get(v, {}).keys() == b.graph.adj.get(v, {}).keys()
        for k, ns in b.graph.adj.get(v, {}).items():
            assert sorted(a.graph.adj[v][k]) == sorted(ns)
    pa = order_free_paths(a.graph, list(a.topics), d_max=settings.d_max, max_paths=2000)
    pb = order_free_paths(b.graph, list(b.topics), d_max=settings.d_max, max_paths=2000)
    assert [path_signature(p) for p in pa.paths] == [path_signature(p) for p in pb.paths]
    assert (pa.bound_hit, pa.bound_reason) == (pb.bound_hit, pb.bound_reason)
    ma, mb = pa.materialize(pa.paths[:20]), pb.materialize(pb.paths[:20])
    assert [p.hops for p in ma] == [p.hops for p in mb]
    return a


def test_fast_path_matches_generic_path(kgs):
    store, mem, qs = kgs
    settings = PoGSettings()
    reduced = 0
    for q in qs:
        a = _same(store, mem, q.topics, settings)
        reduced += a.reduction.reduced
    assert reduced > 0  # some two-topic questions were really reduced


def test_fast_path_matches_when_the_bound_cuts(kgs):
    store, mem, qs = kgs
    settings = PoGSettings(max_subgraph_triples=500)
    cut = 0
    for q in qs[:4] + qs[-3:]:
        cut += bool(_same(store, mem, q.topics, settings).bounds_hit)
    assert cut > 0


def test_unknown_and_isolated_topics(kgs):
    store, mem, qs = kgs
    _same(store, mem, [qs[0].topics[0], "no_such_entity"], PoGSettings())
    _same(store, mem, ["no_such_entity"], PoGSettings())


def test_distances_match_generic_bfs(kgs):
    from kgreason.pog.clustering import ClusteredGraph
    from kgreason.pog.reduction import bfs_distances

    store, _, qs = kgs
    a = asyncio.run(prepare_graph(store, qs[-1].topics, PoGSettings()))
    slow = ClusteredGraph.from_triples(a.clustered.triples())
    src = qs[-1].topics[0]
    assert bfs_distances(a.clustered, src, 3) == bfs_distances(slow, src, 3)
    assert np.all(a.clustered.degree >= 0)


def test_cut_says_what_it_left_out(tmp_path):
    """A hub with 100 edges over 5 relations, bound 10 at hop 1: the 90 edges not taken
    hold all 5 relations and 90 entities no kept edge reaches."""
    rows = [f"hub\tr{i % 5}\tx{i}\n" for i in range(100)] + ["x0\tfar\ty0\n"]
    (tmp_path / "kg.tsv").write_text("".join(rows))
    build_store([Source(tmp_path / "kg.tsv")], tmp_path / "store")
    kg = StoreKG(tmp_path / "store")
    res = kg.graph.expand(kg.node_ids(["hub"]), 2, 10)
    assert res.truncated and res.cut_hop == 1 and len(res.eids) == 10
    assert (res.left_out_relations, res.left_out_entities, res.left_out_exact) == (5, 90, True)
    sub = asyncio.run(prepare_graph(kg, ["hub"], PoGSettings(max_subgraph_triples=10)))
    assert "(5 relations, 90 entities not reached)" in sub.bounds_hit[0]


def test_a_questions_graph_is_freed_without_the_cyclic_collector(kgs):
    """A question's graph and everything hanging off it (names, index, adj, segment table,
    paths) is freed by reference counts alone. A graph -> adj -> graph cycle, and names <->
    index, left each ~10-20 MB graph at 10M to the cyclic collector, which runs by object
    counts: RSS grew by hundreds of MB between its full collections."""
    import gc
    import weakref

    store, _, qs = kgs
    settings = PoGSettings()
    gc.collect()
    gc.disable()
    try:
        for q in (qs[0], qs[-1]):  # a single-topic and a two-topic question
            prep = asyncio.run(prepare_graph(store, q.topics, settings))
            g = prep.graph
            assert isinstance(g, ArrayClusteredGraph)
            topic = prep.topics[0]
            assert g.adj.get(topic)  # the lazy adjacency still reads
            assert g.names.index is g.index
            search = order_free_paths(g, list(prep.topics), d_max=3, max_paths=200)
            assert search.paths
            dead = weakref.ref(g)
            del prep, g, search
            assert dead() is None
    finally:
        gc.enable()
