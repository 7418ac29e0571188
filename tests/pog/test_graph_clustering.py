"""Subgraph detection bound, node/relation clustering, PoG-E sampling and graph reduction."""

from __future__ import annotations

import random

from tests.pog.graph_fixtures import nijmegen_kg

from kgreason.kg.base import Triple
from kgreason.pog.clustering import ClusteredGraph, pog_e_sample
from kgreason.pog.graph import prepare_graph
from kgreason.pog.reduction import reduce_graph
from kgreason.pog.settings import PoGSettings
from kgreason.pog.subgraph import detect_subgraph


def test_clustering_groups_by_entity_relation_and_direction() -> None:
    ts = [
        Triple("film", "starred_actors", "a1"),
        Triple("film", "starred_actors", "a2"),
        Triple("film", "directed_by", "d"),
        Triple("other", "starred_actors", "a1"),
    ]
    g = ClusteredGraph.from_triples(ts)
    as_sets = {e: {k: set(ns) for k, ns in ks.items()} for e, ks in g.adj.items()}
    assert as_sets["film"] == {
        ("directed_by", True): {"d"},
        ("starred_actors", True): {"a1", "a2"},
    }
    assert as_sets["a1"] == {("starred_actors", False): {"film", "other"}}
    assert g.clustered_edge_count() == 2 + 1 + 1 + 1 + 1  # film:2, a1, a2, d, other
    assert g.triple_count() == 4
    # a step from a set is the union of the members' neighbours via one key
    assert g.step({"a1", "a2"}, ("starred_actors", False)) == {"film", "other"}
    assert g.hop_triples(("a1",), ("starred_actors", False), ("other",)) == (
        Triple("other", "starred_actors", "a1"),
    )


def _multi_relation_triples() -> list[Triple]:
    ts = []
    rels = ["directed_by", "written_by", "produced_by"]
    for i in range(40):
        for r in rels[: 1 + i % 3]:
            ts.append(Triple(f"film{i}", r, f"person{i}"))
    ts.append(Triple("person0", "appears_in", "film0"))  # opposite direction, same pair
    return ts


def test_pog_e_keeps_one_relation_per_pair_reproducibly() -> None:
    ts = _multi_relation_triples()
    a = pog_e_sample(ts, seed=7)
    shuffled = ts[:]
    random.Random(1).shuffle(shuffled)
    assert pog_e_sample(shuffled, seed=7) == a  # independent of input order
    pairs = [frozenset((t.head, t.tail)) for t in a]
    assert len(pairs) == len(set(pairs)) == 40  # one relation per entity pair
    assert pog_e_sample(ts, seed=8) != a  # another seed, other choices
    # pairs with a single relation are untouched
    assert Triple("film3", "directed_by", "person3") in a
    ga = ClusteredGraph.from_triples(ts, variant="pog-e", seed=7)
    assert ga.triples() == set(a)
    assert ClusteredGraph.from_triples(ts).triple_count() == len(ts)


def test_reduction_keeps_only_connecting_paths() -> None:
    ts = [
        Triple("a", "r", "m"),
        Triple("m", "s", "x"),
        Triple("a", "t", "dangling1"),
        Triple("dangling1", "t", "dangling2"),
        Triple("x", "u", "far1"),
    ]
    g = ClusteredGraph.from_triples(ts)
    red = reduce_graph(g, ["a", "x"], max_len=4)
    assert red.reduced
    assert red.graph.entities() == {"a", "m", "x"}
    assert (red.entities_before, red.entities_after) == (6, 3)
    assert (red.triples_before, red.triples_after) == (5, 2)
    # a longer bound admits a detour only if it really connects: none here
    assert reduce_graph(g, ["a", "x"], max_len=6).graph.entities() == {"a", "m", "x"}


def test_reduction_single_topic_or_disconnected_keeps_graph_and_says_why() -> None:
    ts = [Triple("a", "r", "b"), Triple("c", "r", "d")]
    g = ClusteredGraph.from_triples(ts)
    one = reduce_graph(g, ["a"], max_len=3)
    assert not one.reduced and one.graph.entities() == g.entities() and "fewer than two" in one.note
    two = reduce_graph(g, ["a", "c"], max_len=3)
    assert not two.reduced and "not connected" in two.note


async def test_subgraph_truncation_is_reported() -> None:
    kg = nijmegen_kg()
    full = await detect_subgraph(kg, ["m.nijmegen", "m.france"], PoGSettings())
    assert not full.truncated and full.bounds_hit() == []
    assert "m.germany" in full.entities() and len(full.triples) == 18  # noise relation dropped
    cut = await detect_subgraph(kg, ["m.nijmegen"], PoGSettings(max_subgraph_triples=3))
    assert cut.truncated and len(cut.triples) == 3
    assert cut.bounds_hit() and "max_triples=3" in cut.bounds_hit()[0]
    unknown = await detect_subgraph(kg, ["m.nowhere"], PoGSettings())
    assert unknown.unknown_topics == ["m.nowhere"] and unknown.triples == []


async def test_prepare_graph_reduces_nijmegen_and_records_sizes() -> None:
    kg = nijmegen_kg()
    prep = await prepare_graph(kg, ["m.nijmegen", "m.france"], PoGSettings(d_max=2))
    s = prep.stats
    assert s.entities >= s.reduced_entities and s.triples >= s.reduced_triples
    assert {"m.nijmegen", "m.france", "m.germany", "m.weeze", "m.cvt1"} <= prep.graph.entities()
    assert "m.cdg" not in prep.graph.entities()  # France's airport connects nothing
    assert set(prep.timings_s) == {"subgraph", "clustering", "reduction"}
    pe = await prepare_graph(
        kg, ["m.nijmegen", "m.france"], PoGSettings(d_max=2, variant="pog-e", seed=3)
    )
    assert pe.clustered.variant == "pog-e"
