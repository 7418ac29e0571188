"""EntityPathFind: the length condition, entity order, restriction to connecting chains, the
no-backtracking rule and the reported enumeration bound."""

from __future__ import annotations

from kgreason.kg.base import Triple
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.paths import (
    find_entity_paths,
    length_window,
    supplement_paths,
    topic_entity_paths,
)
from kgreason.pog.types import ReasoningPath


def _chain(prefix: str, start: str, end: str, n: int) -> list[Triple]:
    nodes = [start, *[f"{prefix}{i}" for i in range(1, n)], end]
    return [Triple(nodes[i], f"{prefix}_r{i}", nodes[i + 1]) for i in range(n)]


def _ladder() -> ClusteredGraph:
    """a and x joined by disjoint chains of length 2, 3, 4 and 5."""
    ts = []
    for n, p in ((2, "m"), (3, "n"), (4, "o"), (5, "p")):
        ts += _chain(p, "a", "x", n)
    return ClusteredGraph.from_triples(ts)


def _node_sequence(p: ReasoningPath) -> list[tuple[str, ...]]:
    return [p.hops[0].src, *(h.dst for h in p.hops)]


def test_length_window_matches_paper() -> None:
    # |Topic|*(D-1) < length <= |Topic|*D
    assert length_window(1, 1) == (1, 1)
    assert length_window(2, 2) == (3, 4)
    assert length_window(3, 2) == (4, 6)


def test_topic_entity_paths_respect_the_length_condition() -> None:
    g = _ladder()
    for depth, expected in ((1, {2}), (2, {3, 4}), (3, {5})):
        res = topic_entity_paths(g, ["a", "x"], depth, max_paths=1000)
        assert {p.length for p in res.paths} == expected, depth
        for p in res.paths:
            assert p.hops[0].src == ("a",) and p.hops[-1].dst == ("x",)
            assert p.entity_list == ("a", "x")
    sup = supplement_paths(g, ["a", "x"], n_topics=1, d_max=3, max_paths=1000)
    assert {p.length for p in sup.paths} == {2, 3}


def test_single_topic_paths_end_anywhere_with_exact_depth() -> None:
    g = _ladder()
    res = topic_entity_paths(g, ["a"], 2, max_paths=1000)
    assert res.paths and {p.length for p in res.paths} == {2}
    ends = {e for p in res.paths for e in p.end_entities()}
    assert ends == {"x", "n2", "o2", "p2"}


def test_entity_order_is_followed() -> None:
    ts = [
        *_chain("u", "a", "b", 2),
        *_chain("v", "b", "c", 1),
        *_chain("w", "a", "c", 1),
    ]
    g = ClusteredGraph.from_triples(ts)
    fwd = find_entity_paths(g, ["a", "b", "c"], min_len=1, max_len=6, max_paths=100)
    assert fwd.paths
    for p in fwd.paths:
        seq = _node_sequence(p)
        pos = {e: next(i for i, s in enumerate(seq) if e in s) for e in "abc"}
        assert pos["a"] == 0 < pos["b"] < pos["c"] == len(seq) - 1
    rev = find_entity_paths(g, ["c", "b", "a"], min_len=1, max_len=6, max_paths=100)
    assert rev.paths and all(p.hops[0].src == ("c",) for p in rev.paths)
    assert all(p.hops[-1].dst == ("a",) for p in rev.paths)
    assert {p.length for p in rev.paths} == {p.length for p in fwd.paths}


def test_connecting_path_keeps_only_members_on_chains() -> None:
    ts = [
        Triple("a", "r", "m1"),
        Triple("a", "r", "m2"),
        Triple("m1", "s", "x"),
        Triple("m2", "s", "y"),
    ]
    g = ClusteredGraph.from_triples(ts)
    res = find_entity_paths(g, ["a", "x"], min_len=1, max_len=4, max_paths=10)
    assert len(res.paths) == 1
    (p,) = res.paths
    assert [h.dst for h in p.hops] == [("m1",), ("x",)]
    full = res.materialize(res.paths)[0]
    assert full.triples() == [Triple("a", "r", "m1"), Triple("m1", "s", "x")]
    # the single-topic search keeps the whole clustered set
    free = find_entity_paths(g, ["a"], min_len=1, max_len=1, max_paths=10)
    assert free.paths[0].hops[0].dst == ("m1", "m2")


def test_no_immediate_backtracking() -> None:
    # films sharing a director with f0: f0 -directed_by-> d <-directed_by- {f1, f2}
    ts = [Triple(f, "directed_by", "d") for f in ("f0", "f1", "f2")]
    g = ClusteredGraph.from_triples(ts)
    res = topic_entity_paths(g, ["f0"], 2, max_paths=10)
    assert [p.end_entities() for p in res.paths] == [("f1", "f2")]
    assert res.paths[0].hops[1].forward is False


def test_enumeration_bound_is_reported() -> None:
    ts = [Triple("a", f"r{i:02d}", f"b{i}") for i in range(50)]
    g = ClusteredGraph.from_triples(ts)
    small = topic_entity_paths(g, ["a"], 1, max_paths=10)
    assert len(small.paths) == 10 and small.bound_hit
    assert "max_paths=10" in small.bound_reason and small.bounds_hit()
    full = topic_entity_paths(g, ["a"], 1, max_paths=100)
    assert len(full.paths) == 50 and not full.bound_hit and full.bounds_hit() == []


def test_missing_entity_gives_no_paths_and_says_so() -> None:
    g = _ladder()
    res = topic_entity_paths(g, ["a", "nowhere"], 2, max_paths=10)
    assert res.paths == [] and res.missing == ["nowhere"]


def test_relation_clustering_merges_parallel_relations_into_one_hop() -> None:
    # Freebase stores both directions: a -contains-> b and b -containedby-> a
    ts = [
        Triple("a", "contains", "b"),
        Triple("b", "containedby", "a"),
        Triple("b", "s", "x"),
    ]
    g = ClusteredGraph.from_triples(ts)
    res = find_entity_paths(g, ["a", "x"], min_len=1, max_len=4, max_paths=100)
    assert len(res.paths) == 1  # not one path per parallel relation
    hop = res.paths[0].hops[0]
    assert hop.relation_keys() == (("containedby", False), ("contains", True))
    full = res.materialize(res.paths)[0]
    assert set(full.hops[0].triples) == {
        Triple("a", "contains", "b"),
        Triple("b", "containedby", "a"),
    }
    free = topic_entity_paths(g, ["a"], 1, max_paths=10)
    assert len(free.paths) == 1 and free.paths[0].hops[0].alt_relations == (("contains", True),)


def test_repeated_entity_in_list_counts_once() -> None:
    g = _ladder()
    once = find_entity_paths(g, ["a", "x"], min_len=1, max_len=3, max_paths=100)
    twice = find_entity_paths(g, ["a", "x", "a"], min_len=1, max_len=3, max_paths=100)
    assert twice.paths == once.paths and twice.entity_list == ("a", "x")
