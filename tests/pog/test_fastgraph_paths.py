"""Entity-path search on integer arrays (pog/arrays/search.py) finds exactly what paths.py's
set-based search finds: same hops (sets, relations, alternative relations), same order,
same bound and reason, on a skewed synthetic KG (hubs, inverse-like parallel relations)
and on the bundled MetaQA KB."""

from __future__ import annotations

import asyncio
import random

import numpy as np
import pytest
from tests.pog.synth_graphs import synth_graphs, two_hops_from

from kgreason.kg.base import Triple
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.order_free import order_free_paths
from kgreason.pog.paths import find_entity_paths


def _pair(h, r, t, names, rels):
    fast = ArrayClusteredGraph.from_arrays(h, r, t, names, rels)
    slow = ClusteredGraph.from_triples(
        Triple(names[a], rels[b], names[c]) for a, b, c in zip(h, r, t, strict=True)
    )
    return fast, slow


@pytest.fixture(scope="module")
def graphs():
    fast, slow, names, deg = synth_graphs(mirror=400)
    return fast, slow, [names[i] for i in np.flatnonzero(deg > 0)]


def _same(fast, slow, ents, lo, hi, max_paths):
    a = find_entity_paths(fast, ents, min_len=lo, max_len=hi, max_paths=max_paths)
    b = find_entity_paths(slow, ents, min_len=lo, max_len=hi, max_paths=max_paths)
    assert [p.hops for p in a.paths] == [p.hops for p in b.paths], ents
    assert (a.bound_hit, a.bound_reason, a.missing) == (b.bound_hit, b.bound_reason, b.missing)
    assert a.expansions == b.expansions
    return a


def test_free_paths_match(graphs):
    fast, slow, nodes = graphs
    rng = random.Random(3)
    hubs = sorted(nodes, key=lambda v: -len(slow.neighbors_undirected(v)))[:3]
    bounded = alts = 0
    for start in hubs + rng.sample(nodes, 12):
        for max_paths in (7, 300):
            a = _same(fast, slow, [start], 1, 3, max_paths)
            bounded += a.bound_hit
            alts += any(h.alt_relations for p in a.paths for h in p.hops)
        _same(fast, slow, [start], 3, 3, 300)  # the topic-entity window: min_len > 1
    assert bounded and alts  # both the bound and relation clustering were exercised


def test_segment_paths_match(graphs):
    fast, slow, nodes = graphs
    rng = random.Random(4)
    found = 0
    for _ in range(14):
        a = rng.choice(nodes)
        b = two_hops_from(slow, a, rng, nodes)
        ents = [a, b] if a != b else [a, rng.choice(nodes)]
        for max_paths in (5, 400):
            found += bool(_same(fast, slow, ents, 1, 6, max_paths).paths)
    three = [nodes[0], nodes[1], nodes[2]]
    _same(fast, slow, three, 1, 6, 200)
    assert found


def test_order_free_and_missing_entities(graphs):
    fast, slow, nodes = graphs
    for ents in ([nodes[5], nodes[9]], [nodes[5], "no_such_node"], ["no_such_node"]):
        a = order_free_paths(fast, ents, d_max=3, max_paths=300)
        b = order_free_paths(slow, ents, d_max=3, max_paths=300)
        assert [p.hops for p in a.paths] == [p.hops for p in b.paths]
        assert (a.bound_hit, a.bound_reason, a.missing) == (b.bound_hit, b.bound_reason, b.missing)


def test_bundled_metaqa_paths_match(tmp_path_factory):
    from kgreason.kg.bundled import bundled_store_path
    from kgreason.kg.store import StoreKG
    from kgreason.pog.graph import prepare_graph
    from kgreason.pog.settings import PoGSettings

    cache = tmp_path_factory.mktemp("kgreason-cache")
    kg = StoreKG(bundled_store_path({"KGREASON_CACHE_DIR": str(cache)}))
    topics = [["Kismet"], ["Tom Hanks"], ["Kismet", "Tom Hanks"], ["The Green Mile", "Tom Hanks"]]
    for ts in topics:
        prep = asyncio.run(prepare_graph(kg, ts, PoGSettings()))
        assert isinstance(prep.graph, ArrayClusteredGraph)
        slow = ClusteredGraph.from_triples(prep.graph.triples(), isolated=ts)
        a = order_free_paths(prep.graph, ts, d_max=3, max_paths=2000)
        b = order_free_paths(slow, ts, d_max=3, max_paths=2000)
        assert a.paths and [p.hops for p in a.paths] == [p.hops for p in b.paths], ts
        assert (a.bound_hit, a.bound_reason) == (b.bound_hit, b.bound_reason)
        ma, mb = a.materialize(a.paths[:10]), b.materialize(b.paths[:10])
        assert [p.hops for p in ma] == [p.hops for p in mb]
