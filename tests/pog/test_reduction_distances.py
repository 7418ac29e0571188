"""A two-topic reduction hands the segment search each topic's distances
(ArrayClusteredGraph.topic_distances): they are the reduced graph's own undirected
distances, at every search depth up to the reduction's, so the search finds the same
paths without building and searching an undirected copy of the graph."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tests.pog.synth_graphs import synth_graphs, two_hops_from

from kgreason.pog.arrays import search as fastpaths
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.paths import find_entity_paths
from kgreason.pog.reduction import reduce_graph


@pytest.fixture(scope="module")
def graphs():
    fast, slow, names, deg = synth_graphs(mirror=300)
    return fast, slow, [str(names[i]) for i in np.flatnonzero(deg > 0)]


def _pairs(slow, nodes, k, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < k:
        a = rng.choice(nodes)
        b = two_hops_from(slow, a, rng, nodes)
        if a != b:
            out.append([a, b])
    return out


def test_two_topic_reduction_distances_are_the_reduced_graphs(graphs):
    fast, slow, nodes = graphs
    checked = cut = 0
    for pair in _pairs(slow, nodes, 25, 1):
        red = reduce_graph(fast, pair, max_len=6)
        if not red.reduced:
            continue
        g = red.graph
        assert g.topic_distances is not None and g.topic_distances[0] == 6
        und = g.undirected_cached()
        for u, d in g.topic_distances[1].items():
            for depth in (1, 2, 4, 6):
                got = fastpaths._distances_to(g, u, depth)
                assert got.tolist() == g.local_distances(u, depth, und).tolist()
            cut += int(((fast.local_distances(u, 6) >= 0) & (d < 0)).sum())
        checked += 1
    assert checked and cut  # reductions that removed reachable nodes were among them


def test_no_topic_distances_for_three_topics_or_a_deeper_search(graphs):
    fast, slow, nodes = graphs
    a, b = _pairs(slow, nodes, 1, 2)[0]
    c = two_hops_from(slow, b, random.Random(3), nodes)
    red = reduce_graph(fast, [a, b, c], max_len=9)
    assert red.graph.topic_distances is None
    two = reduce_graph(fast, [a, b], max_len=4)
    if two.reduced:  # a search deeper than the reduction's depth searches again
        u = fast.index.get(b)
        g = two.graph
        assert fastpaths._distances_to(g, u, 6).tolist() == g.local_distances(u, 6).tolist()


def test_segment_search_on_reduced_graphs_finds_the_set_search_paths(graphs):
    fast, slow, nodes = graphs
    found = 0
    for pair in _pairs(slow, nodes, 12, 4):
        fr, sr = reduce_graph(fast, pair, max_len=6), reduce_graph(slow, pair, max_len=6)
        for lo, hi in ((1, 6), (4, 6), (1, 3)):
            a = find_entity_paths(fr.graph, pair, min_len=lo, max_len=hi, max_paths=500)
            b = find_entity_paths(sr.graph, pair, min_len=lo, max_len=hi, max_paths=500)
            assert [p.hops for p in a.paths] == [p.hops for p in b.paths], pair
            assert (a.bound_hit, a.bound_reason) == (b.bound_hit, b.bound_reason)
            found += bool(a.paths)
    assert found


def test_random_small_graphs_any_pair_every_depth():
    """Random multigraphs, any topic pair, every reduction depth 1..6 and every search
    depth up to it: the handed distances are the reduced graph's; the search finds the
    same paths with them and without."""
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(120):
        n = int(rng.integers(5, 40))
        m = int(rng.integers(n, 3 * n))
        h, t, r = rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, 3, m)
        names = np.array([f"n{i:03d}" for i in range(n)], dtype=object)
        g = ArrayClusteredGraph.from_arrays(h, r, t, names, ["a", "b", "c"])
        a, b = rng.choice(n, 2, replace=False)
        topics = [str(names[a]), str(names[b])]
        depth = int(rng.integers(1, 7))
        red = reduce_graph(g, topics, max_len=depth)
        if not red.reduced:
            continue
        rg = red.graph
        assert rg.topic_distances is not None
        und = rg.undirected_cached()
        for u in rg.topic_distances[1]:
            for d in range(depth + 1):
                assert (
                    fastpaths._distances_to(rg, u, d).tolist()
                    == rg.local_distances(u, d, und).tolist()
                )
                checked += 1
        for lo, hi in ((1, depth), (depth, depth), (1, max(1, depth - 1))):
            with_d = find_entity_paths(rg, topics, min_len=lo, max_len=hi, max_paths=1000)
            handed, rg.topic_distances = rg.topic_distances, None
            without = find_entity_paths(rg, topics, min_len=lo, max_len=hi, max_paths=1000)
            rg.topic_distances = handed
            assert [p.hops for p in with_d.paths] == [p.hops for p in without.paths]
    assert checked > 200


def _reduced_arrays(red):
    g = red.graph
    arrays = [getattr(g, x).tolist() for x in ("h", "r", "t", "optr", "idst", "irel", "isrc")]
    dist = {u: d.tolist() for u, d in (g.topic_distances or (0, {}))[1].items()}
    return arrays, dist, red.entities_after, red.triples_after, red.note


@pytest.mark.parametrize("topics", [2, 3])
def test_threaded_reduction_equals_one_thread(graphs, monkeypatch, topics):
    """The topics' BFS and the induced CSRs on threads (kernels.run_parallel) reduce every
    graph exactly as on the calling thread, whichever thread finishes first."""
    from kgreason import jit as kernels
    from kgreason.pog.arrays import reduction

    fast, slow, nodes = graphs
    monkeypatch.setenv("KGREASON_JIT", "1")
    monkeypatch.setattr(reduction, "PARALLEL_EDGES", 0)
    rng = random.Random(topics)
    for pair in _pairs(slow, nodes, 8, topics):
        ts = pair if topics == 2 else [*pair, two_hops_from(slow, pair[1], rng, nodes)]
        got = {}
        for n in ("1", "2", "3"):
            monkeypatch.setenv("KGREASON_JIT_THREADS", n)
            got[n] = _reduced_arrays(reduce_graph(fast, ts, max_len=3 * topics))
        assert got["1"] == got["2"] == got["3"]
    assert kernels.threads() == 3


def test_run_parallel_keeps_order_and_raises():
    import threading

    from kgreason.jit import run_parallel

    seen = []

    def call(i):
        def f():
            seen.append(threading.get_ident())
            return i * i

        return f

    assert run_parallel([call(i) for i in range(5)], 3) == [0, 1, 4, 9, 16]
    assert len(set(seen)) >= 2  # (the caller and at least one worker)
    assert run_parallel([], 2) == [] and run_parallel([call(7)], 2) == [49]

    def boom():
        raise ValueError("part failed")

    with pytest.raises(ValueError, match="part failed"):
        run_parallel([call(1), boom], 2)
