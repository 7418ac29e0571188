"""The array form's collision test (pog/arrays/collisions.py) flags exactly the paths the
reference (order_free.collision_path) flags: on random free paths of a skewed synthetic
graph, with the thresholds lowered so that both answers occur, and on a crafted merged
node (a shared value that also carries a whole small entity, MetaQA's "War")."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tests.pog.synth_graphs import synth_graphs

from kgreason.kg.base import Triple
from kgreason.pog import order_free
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.order_free import collision_path, collision_paths
from kgreason.pog.paths import find_entity_paths


@pytest.fixture(scope="module")
def graphs():
    fast, slow, names, deg = synth_graphs(mirror=400)
    return fast, slow, [names[i] for i in np.flatnonzero(deg > 2)]


@pytest.mark.parametrize("thresholds", [(50, 2, 3), (3, 2, 1), (2, 3, 1)])
def test_array_collisions_match_the_reference(graphs, monkeypatch, thresholds):
    fast, slow, nodes = graphs
    for name, v in zip(
        ("COLLECTOR_DEGREE", "COLLISION_OTHER_DEGREE", "MERGED_KEYS"), thresholds, strict=True
    ):
        monkeypatch.setattr(order_free, name, v)
    rng = random.Random(sum(thresholds))
    flagged = 0
    for start in rng.sample(nodes, 25):
        paths = list(find_entity_paths(fast, [start], min_len=2, max_len=3, max_paths=300).paths)
        got = collision_paths(fast, paths)  # the array backend's
        want = [collision_path(slow, p) for p in paths]
        assert got == want, start
        flagged += sum(got)
    if thresholds != (50, 2, 3):
        assert flagged > 0  # the lowered thresholds make both answers occur


def test_a_merged_node_is_flagged_by_both_forms():
    films = [f"film{i}" for i in range(60)]
    triples = [Triple(f, "has_genre", "War") for f in films]
    triples += [Triple("War", "directed_by", "Atwell"), Triple("War", "release_year", "2007")]
    triples += [
        Triple("War", "starred_actors", "Statham"),
        Triple("film0", "directed_by", "Cameron"),
    ]
    slow = ClusteredGraph.from_triples(triples)
    names = sorted({x for t in triples for x in (t.head, t.tail)})
    rels = sorted({t.relation for t in triples})
    at = {n: i for i, n in enumerate(names)}
    h, r, t = (
        np.array(v, dtype=np.int64)
        for v in zip(
            *[(at[x.head], rels.index(x.relation), at[x.tail]) for x in triples], strict=True
        )
    )
    fast = ArrayClusteredGraph.from_arrays(h, r, t, np.array(names, dtype=object), rels)
    paths = list(find_entity_paths(fast, ["film1"], min_len=2, max_len=2, max_paths=100).paths)
    assert paths
    got = collision_paths(fast, paths)
    assert got == [collision_path(slow, p) for p in paths]
    through_war = [
        g
        for g, p in zip(got, paths, strict=True)
        if p.hops[0].dst == ("War",) and p.hops[1].relation == "directed_by"
    ]
    assert through_war == [True]
