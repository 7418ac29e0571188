"""`max_level_rows`: a path-search level that would read too many edge rows is not searched.

The rule is stated on the clustered graph (the degrees of the members of every partial
path's set, summed), so the set-based search (paths.py) and the array search (fastpaths.py)
must stop at the same length with the same paths and the same reason; shorter lengths are
kept whole, and nothing is cut below the bound."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tests.pog.synth_graphs import synth_graphs, two_hops_from

from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.order_free import order_free_paths
from kgreason.pog.paths import find_entity_paths
from kgreason.pog.settings import PoGSettings


@pytest.fixture(scope="module")
def graphs():
    fast, slow, names, deg = synth_graphs()
    return fast, slow, [names[i] for i in np.flatnonzero(deg > 0)]


def _search(g, ents, rows, max_len=3):
    return find_entity_paths(
        g, ents, min_len=1, max_len=max_len, max_paths=20_000, max_level_rows=rows
    )


def _level_rows(slow: ClusteredGraph, start: str, max_len: int) -> list[int]:
    """Rows each level reads with no bound, from the unbounded set-based search."""
    full = _search(slow, [start], None, max_len)
    rows = [sum(len(v) for v in slow.adj[start].values())]
    for k in range(1, max_len):
        ends = [p.hops[-1].dst for p in full.paths if p.length == k]
        rows.append(sum(len(v) for d in ends for u in d for v in slow.adj[u].values()))
    return rows


def test_free_search_stops_at_the_level_that_is_too_big(graphs):
    fast, slow, nodes = graphs
    start = max(nodes, key=lambda v: len(slow.neighbors_undirected(v)))
    rows = _level_rows(slow, start, 3)
    assert rows[2] > rows[1]  # the third level reads more than the second
    bound = (rows[1] + rows[2]) // 2  # lets lengths 1-2 through, stops length 3
    full = _search(slow, [start], None)
    for g in (slow, fast):
        got = _search(g, [start], bound)
        assert got.bound_hit
        assert f"max_level_rows={bound}: length 3 not searched from {start}" in got.bound_reason
        assert f"would read {rows[2]} edge rows" in got.bound_reason
        # shorter lengths kept whole, nothing longer
        assert [p.hops for p in got.paths] == [p.hops for p in full.paths if p.length <= 2]
    # at exactly the level's rows nothing is cut
    assert not _search(fast, [start], rows[2]).bound_hit
    assert [p.hops for p in _search(fast, [start], rows[2]).paths] == [p.hops for p in full.paths]


def test_array_and_set_search_agree_under_the_bound(graphs):
    fast, slow, nodes = graphs
    rng = random.Random(5)
    cut = 0
    for _ in range(10):
        a = rng.choice(nodes)
        b = two_hops_from(slow, a, rng, nodes)
        for ents in ([a], [a, b] if a != b else [a]):
            for bound in (50, 2_000, 40_000):
                x = _search(fast, ents, bound, max_len=4)
                y = _search(slow, ents, bound, max_len=4)
                assert [p.hops for p in x.paths] == [p.hops for p in y.paths], (ents, bound)
                assert (x.bound_hit, x.bound_reason, x.expansions) == (
                    y.bound_hit,
                    y.bound_reason,
                    y.expansions,
                )
                cut += "max_level_rows" in x.bound_reason
    assert cut  # the bound fired somewhere


def test_order_free_reports_the_bound(graphs):
    fast, _, nodes = graphs
    start = max(nodes, key=lambda v: len(fast.adj[v]))
    two = [start, sorted(fast.neighbors_undirected(start))[0]]
    got = order_free_paths(fast, two, d_max=3, max_paths=20_000, max_level_rows=10)
    assert got.bound_hit and "max_level_rows=10" in got.bound_reason
    assert (
        "max_level_rows" not in order_free_paths(fast, two, d_max=1, max_paths=20_000).bound_reason
    )


def test_setting_default_and_validation():
    assert PoGSettings().max_level_rows == 5_000_000
    assert PoGSettings(max_level_rows=None).max_level_rows is None
    with pytest.raises(ValueError):
        PoGSettings(max_level_rows=0)
