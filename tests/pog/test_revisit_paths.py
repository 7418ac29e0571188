"""Budget.revisit_when_empty (PoGSettings.revisit_when_empty): a single-topic search step
that the two exclusions (never the start again, no immediate backtracking) leave empty
reaches what they excluded instead, so PathQuestion's chains through the topic ("who is
the child of [X]'s parent" where X is the only child) are found; answer_set answers the
topic when a single-topic path's end set holds only topics. Off (the default), nothing
changes. The tiers' equality with the flag on is in test_fastgraph_paths.py."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from kgreason.kg.base import Triple
from kgreason.kg.memory import MemoryKG
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.clustering import ClusteredGraph, Key
from kgreason.pog.graph import prepare_graph
from kgreason.pog.paths import find_entity_paths
from kgreason.pog.ranker.supervision import PathEnumerator, answer_set, answer_size
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import ReasoningPath

ONLY_CHILD = [("X", "parents", "P"), ("P", "children", "X"), ("X", "nationality", "N")]
SIBLING = [("P", "children", "Y"), ("Y", "parents", "P")]


def _graph(triples, revisit: bool = True) -> ClusteredGraph:
    settings = PoGSettings(revisit_when_empty=revisit)
    return asyncio.run(prepare_graph(MemoryKG(triples), ["X"], settings)).graph


def _paths(graph, start: str, revisit: bool, max_len: int = 3) -> list[ReasoningPath]:
    res = find_entity_paths(
        graph, [start], min_len=1, max_len=max_len, max_paths=500, revisit_when_empty=revisit
    )
    return list(res.paths)


def _with(paths, *keys: Key) -> list[ReasoningPath]:
    """The paths whose hop i can be read by relation key keys[i]."""
    return [
        p
        for p in paths
        if len(p.hops) == len(keys)
        and all(k in h.relation_keys() for h, k in zip(p.hops, keys, strict=True))
    ]


def test_parent_of_only_child_returns_to_the_topic():
    g = _graph(ONLY_CHILD)
    (p,) = _with(_paths(g, "X", True), ("parents", True), ("children", True))
    assert p.hops[0].dst == ("P",) and p.hops[1].dst == ("X",)
    assert answer_set(p, ["X"]) == ("X",) and answer_size(p, ["X"]) == 1
    # X -> P -> X -> N: the chain goes on from the topic
    (q,) = _with(_paths(g, "X", True), ("parents", True), ("children", True), ("nationality", True))
    assert q.end_entities() == ("N",) and answer_set(q, ["X"]) == ("N",)
    # off (the default): no step returns to X, so neither chain exists
    off = _paths(g, "X", False)
    assert not _with(off, ("parents", True), ("children", True))
    assert all("X" not in p.end_entities() for p in off)


def test_a_sibling_keeps_the_exclusions():
    """P has another child Y: the step is not empty, so it reaches Y only."""
    g = _graph(ONLY_CHILD + SIBLING)
    for revisit in (True, False):
        (p,) = _with(_paths(g, "X", revisit), ("parents", True), ("children", True))
        assert p.hops[1].dst == ("Y",)
        assert answer_set(p, ["X"]) == ("Y",) and answer_size(p, ["X"]) == 1


def test_supervision_paths_follow_the_setting():
    kg = MemoryKG(ONLY_CHILD)
    for revisit in (True, False):
        enum = PathEnumerator(kg, PoGSettings(revisit_when_empty=revisit))
        paths = asyncio.run(enum.paths(["X"]))
        found = _with(paths, ("parents", True), ("children", True))
        assert len(found) == revisit
        if revisit:
            assert answer_set(found[0], ["X"]) == ("X",)


def _self_loop_graphs() -> tuple[ClusteredGraph, ArrayClusteredGraph]:
    """(B, tracks, B) and (B, genre, G) in both forms, the self-loop kept (the graphs'
    constructors drop self-loops; tests/pog/test_fastgraph_paths.py builds them like this)."""
    from tests.pog.test_fastgraph_paths import loop_graphs

    return loop_graphs([Triple("B", "tracks", "B"), Triple("B", "genre", "G")])


@pytest.mark.parametrize("form", ["reference", "arrays"])
def test_self_loop_reaches_the_topic(form):
    slow, fast = _self_loop_graphs()
    g = slow if form == "reference" else fast
    got = _paths(g, "B", True)
    (p,) = _with(got, ("tracks", True), ("tracks", True))
    assert p.end_entities() == ("B",)
    assert answer_set(p, ["B"]) == ("B",) and answer_size(p, ["B"]) == 1
    assert not _with(_paths(g, "B", False), ("tracks", True), ("tracks", True))


@pytest.mark.xfail(
    strict=True,
    reason="ClusteredGraph.from_triples and ArrayClusteredGraph.build drop self-loops, so a "
    "KG's (B, tracks, B) never reaches the search",
)
def test_self_loop_of_a_kg_reaches_the_topic():
    kg = MemoryKG([("B", "tracks", "B"), ("B", "genre", "G")])
    g = asyncio.run(prepare_graph(kg, ["B"], PoGSettings(revisit_when_empty=True))).graph
    assert _with(_paths(g, "B", True), ("tracks", True), ("tracks", True))


def test_answer_of_a_path_ending_in_topics_only():
    """answer_set / answer_size: a single-topic path ending only in topics answers them; a
    path joining several topics, or ending beside a non-topic, is unchanged."""
    from kgreason.pog.types import Hop

    def path(dst: tuple[str, ...], ents: tuple[str, ...]) -> ReasoningPath:
        return ReasoningPath((Hop(("X",), "r", ("P",), True), Hop(("P",), "s", dst, True)), ents)

    assert answer_set(path(("X",), ("X",)), ["X"]) == ("X",)
    assert answer_set(path(("X", "Z"), ("X",)), ["X", "Z"]) == ("X", "Z")
    assert answer_set(path(("X", "Y"), ("X",)), ["X"]) == ("Y",)
    assert answer_set(path(("X",), ("X", "Q")), ["X", "Q"]) == ("P",)
    for dst, ents, topics in (
        (("X",), ("X",), ["X"]),
        (("X", "Z"), ("X",), ["X", "Z"]),
        (("X", "Y"), ("X",), ["X"]),
    ):
        p = path(dst, ents)
        assert answer_size(p, topics) == len(answer_set(p, topics))


def test_array_search_answers_count_topic_ends():
    """LazyHop.count_answers (answer_size on an array search's ids) agrees with answer_set
    when the end set holds only the topic."""
    _, fast = _self_loop_graphs()
    paths = _paths(fast, "B", True)
    ends = [p for p in paths if p.end_entities() == ("B",)]
    assert ends
    for p in paths:
        got = p.hops[0].count_answers(p.hops, ["B"], True)
        assert got == len(answer_set(p, ["B"])) == answer_size(p, ["B"])
    assert np.all([answer_size(p, ["B"]) > 0 for p in ends])
