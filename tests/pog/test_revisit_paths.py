"""Budget.revisit_when_empty (PoGSettings.revisit_when_empty): a single-topic search step
that the two exclusions (never the start again, no immediate backtracking) leave empty
reaches what they excluded instead, so PathQuestion's chains through the topic ("who is
the child of [X]'s parent" where X is the only child) are found; answer_set answers the
topic when a single-topic path's end set holds only topics. Off (the default), nothing
changes. With revisits on, the question graph also keeps the KG's self-loops
(prepare_graph's keep_self_loops): "the tracks of [Believe]'s tracks" reads
(Believe, tracks, Believe). The tiers' equality is in test_fastgraph_paths.py."""

from __future__ import annotations

import asyncio

import pytest

from kgreason.kg.base import Triple
from kgreason.kg.memory import MemoryKG
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.clustering import ClusteredGraph, Key
from kgreason.pog.graph import prepare_graph
from kgreason.pog.paths import find_entity_paths, materialize
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
    """(B, tracks, B) and (B, genre, G) in both forms, the self-loop kept (both builders'
    keep_self_loops, as tests/pog/test_fastgraph_paths.py builds them)."""
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


#: PathQuestion's KBs are keyed by names: the album "Believe" has the track "Believe", and
#: "Bainbridge_Township#containedby#Indiana#recording#Indiana" reads a self-loop mid-path
LOOPS = [
    ("B", "tracks", "B"),
    ("B", "genre", "G"),
    ("Bainbridge_Township", "containedby", "Indiana"),
    ("Indiana", "recording", "Indiana"),
]


def _kg(kind: str, tmp_path):
    if kind == "memory":
        return MemoryKG(LOOPS)
    from kgreason.kg.loaders import Source
    from kgreason.kg.store import StoreKG, build_store

    (tmp_path / "kg.tsv").write_text("".join("\t".join(t) + "\n" for t in LOOPS))
    build_store([Source(tmp_path / "kg.tsv")], tmp_path / "store")  # (keeps self-loops)
    return StoreKG(tmp_path / "store")


@pytest.mark.parametrize("kind", ["memory", "store"])
def test_self_loop_of_a_kg_reaches_the_topic(kind, tmp_path):
    """A KG's self-loop is in the question graph when revisits are on (prepare_graph's
    keep_self_loops), so tracks,tracks from B answers B and containedby,recording reaches
    Indiana; off, the graph is the one without self-loops and neither path exists."""
    kg = _kg(kind, tmp_path)
    loops = {Triple(*t) for t in LOOPS if t[0] == t[2]}
    for revisit in (True, False):
        settings = PoGSettings(revisit_when_empty=revisit)
        g = asyncio.run(prepare_graph(kg, ["B"], settings, keep_self_loops=revisit)).graph
        assert isinstance(g, ArrayClusteredGraph) == (kind == "store")
        assert (Triple("B", "tracks", "B") in g.triples()) == revisit
        assert g.triples() - loops == {Triple("B", "genre", "G")}
        found = _with(_paths(g, "B", revisit), ("tracks", True), ("tracks", True))
        assert len(found) == revisit
        if revisit:
            assert answer_set(found[0], ["B"]) == ("B",) == found[0].end_entities()
            (m,) = materialize(g, found)
            assert all(h.triples == (Triple("B", "tracks", "B"),) for h in m.hops)
        t = "Bainbridge_Township"
        g = asyncio.run(prepare_graph(kg, [t], settings, keep_self_loops=revisit)).graph
        found = _with(_paths(g, t, revisit), ("containedby", True), ("recording", True))
        assert [answer_set(p, [t]) for p in found] == [("Indiana",)] * revisit
        # the flag alone does not matter: a search without revisits reads the loop too
        found = _with(_paths(g, t, False), ("containedby", True), ("recording", True))
        assert len(found) == revisit


def test_supervision_keeps_self_loops_with_revisits():
    """PathEnumerator's candidates (whole-KG graph or prepare_graph) read a KG's self-loops
    exactly when the inference graph does: revisits on."""
    for whole in (True, False):
        for revisit in (True, False):
            enum = PathEnumerator(
                MemoryKG(LOOPS), PoGSettings(revisit_when_empty=revisit), whole=whole
            )
            paths = asyncio.run(enum.paths(["B"]))
            found = _with(paths, ("tracks", True), ("tracks", True))
            assert [answer_set(p, ["B"]) for p in found] == [("B",)] * revisit


def test_ask_reads_a_self_loop(tmp_path, monkeypatch):
    """`kgreason ask` in the LLM-free mode on a KG no ranker was trained on (revisits on:
    "auto" with a zero-shot ranking) answers through a self-loop; off, it cannot."""
    import json

    from typer.testing import CliRunner

    from kgreason.cli import app

    for v in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "KGREASON_LLM__BASE_URL", "KGREASON_CONFIG"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    rows = [
        ("Believe", "tracks", "Believe"),
        ("Believe", "artist", "Cher"),
        ("Cher", "genre", "Pop"),
    ]
    rows += [*LOOPS[2:], ("Indiana", "containedby", "United_States")]
    (tmp_path / "kg.tsv").write_text("".join("\t".join(t) + "\n" for t in rows))
    runner = CliRunner()
    r = runner.invoke(app, ["kg", "build", str(tmp_path / "kg.tsv"), "--out", str(tmp_path / "s")])
    assert r.exit_code == 0, r.stderr
    for question, gold in (
        ("what is the tracks of [Believe]'s tracks", "Believe"),
        ("what is the recording of [Bainbridge_Township]'s containedby", "Indiana"),
    ):
        for mode in ("auto", "off"):
            monkeypatch.setenv("KGREASON_POG__REVISIT_WHEN_EMPTY", mode)
            r = runner.invoke(app, ["ask", question, "--kg", str(tmp_path / "s"), "--json"])
            assert r.exit_code == 0, r.stderr
            got = json.loads(r.stdout)
            hops = [h for p in got["paths"] for h in p["hops"]]
            loops = [
                [tuple(t.values()) for t in h["triples"] if t["head"] == t["tail"]] for h in hops
            ]
            if mode == "auto":
                assert [a["name"] for a in got["answers"]] == [gold], question
                assert any(loops) and all(len(set(x)) == len(x) for x in loops)  # shown once
            else:  # off: the graph has no self-loop, so no path reads one
                assert not any(loops)


def test_answer_of_a_path_ending_in_topics_only():
    """answer_set / answer_size: a single-topic path ending only at its own topic answers
    it; a path joining several topics, or ending beside a non-topic, is unchanged; a path
    from one topic of a several-topic question that ends at ANOTHER topic (the per-topic
    fallback) answers nothing: it did not return, it found the other topic."""
    from kgreason.pog.types import Hop

    def path(dst: tuple[str, ...], ents: tuple[str, ...]) -> ReasoningPath:
        return ReasoningPath((Hop(("X",), "r", ("P",), True), Hop(("P",), "s", dst, True)), ents)

    assert answer_set(path(("X",), ("X",)), ["X"]) == ("X",)
    assert answer_set(path(("X", "Z"), ("X",)), ["X", "Z"]) == ()
    assert answer_set(path(("Z",), ("X",)), ["X", "Z"]) == ()
    assert answer_set(path(("X",), ("X",)), ["X", "Z"]) == ("X",)
    assert answer_set(path(("X", "Y"), ("X",)), ["X"]) == ("Y",)
    assert answer_set(path(("X",), ("X", "Q")), ["X", "Q"]) == ("P",)
    for dst, ents, topics in (
        (("X",), ("X",), ["X"]),
        (("X", "Z"), ("X",), ["X", "Z"]),
        (("Z",), ("X",), ["X", "Z"]),
        (("X",), ("X",), ["X", "Z"]),
        (("X", "Y"), ("X",), ["X"]),
    ):
        p = path(dst, ents)
        assert answer_size(p, topics) == len(answer_set(p, topics))


def test_array_search_answers_count_topic_ends():
    """answer_size on an array search's paths (LazyHop.count_answers counts the non-topic
    ids) agrees with answer_set when the end set holds only the path's own topic, and when
    it holds another topic of the question (B's genre G, G a topic too: no answer)."""
    _, fast = _self_loop_graphs()
    paths = _paths(fast, "B", True)
    ends = [p for p in paths if p.end_entities() == ("B",)]
    others = [p for p in paths if p.end_entities() == ("G",)]
    assert ends and others
    for topics in (["B"], ["B", "G"]):
        for p in paths:
            got = p.hops[0].count_answers(p.hops, topics, True)
            assert got == len(set(p.end_entities()) - set(topics))
            assert answer_size(p, topics) == len(answer_set(p, topics))
    assert all(answer_size(p, ["B"]) > 0 for p in ends)
    assert all(answer_size(p, ["B", "G"]) > 0 for p in ends)
    assert not any(answer_size(p, ["B", "G"]) or answer_set(p, ["B", "G"]) for p in others)
