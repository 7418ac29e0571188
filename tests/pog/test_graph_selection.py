"""Path rendering, FuzzySelect with its cache, and BranchReduceSelect with a fake selector."""

from __future__ import annotations

from collections.abc import Sequence

from tests.pog.graph_fixtures import NIJMEGEN_NAMES, HashingEmbedder

from kgreason.embed.cache import CachedEmbedder
from kgreason.kg.base import Triple
from kgreason.pog.branch import branch_reduce_select, extract_head_steps
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.fuzzy import FuzzySelector
from kgreason.pog.paths import topic_entity_paths
from kgreason.pog.render import render_path, render_paths, render_set
from kgreason.pog.types import Hop, ReasoningPath

LOC = "location.location."


def _nijmegen_path() -> ReasoningPath:
    return ReasoningPath(
        (
            Hop(("m.nijmegen",), LOC + "nearby_airports", ("m.weeze",), True),
            Hop(("m.weeze",), LOC + "containedby", ("m.germany", "m.nrw"), True),
            Hop(("m.germany",), LOC + "adjoin_s", ("m.cvt1",), True),
        ),
        ("m.nijmegen",),
    )


def test_render_with_ids_names_and_unnamed() -> None:
    names = {**NIJMEGEN_NAMES, "m.cvt1": "Unnamed Entity"}
    assert render_path(_nijmegen_path(), names) == (
        "{m.nijmegen: Nijmegen} -> location.location.nearby_airports -> {m.weeze: Weeze Airport}"
        " -> location.location.containedby -> {m.germany: Germany, m.nrw: North Rhine-Westphalia}"
        " -> location.location.adjoin_s -> {m.cvt1: Unnamed Entity}"
    )
    back = ReasoningPath((Hop(("m.germany",), LOC + "containedby", ("m.weeze",), False),))
    assert render_path(back, names, with_ids=False) == (
        "{Germany} <- location.location.containedby <- {Weeze Airport}"
    )
    many = tuple(f"e{i}" for i in range(12))
    assert render_set(many, {}, max_items=3) == "{e0, e1, e2, ... (+9 more)}"


class _CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.calls.append(len(texts))
        return super().embed(texts)


def _star() -> ClusteredGraph:
    ts = [
        Triple("film", "directed_by", "d1"),
        Triple("film", "written_by", "w1"),
        Triple("film", "release_year", "y1"),
        Triple("other", "directed_by", "d1"),
        Triple("other", "in_language", "l1"),
        Triple("w1", "born_in", "city"),
        Triple("third", "written_by", "w1"),
        Triple("y1", "after", "y0"),
    ]
    return ClusteredGraph.from_triples(ts)


def test_fuzzy_select_ranks_by_indicator_and_caches() -> None:
    g = _star()
    paths = topic_entity_paths(g, ["film"], 1, max_paths=100).paths
    emb = _CountingEmbedder()
    fz = FuzzySelector(CachedEmbedder(emb))
    names = {e: e for e in g.entities()}
    top = fz.select("who directed it", paths, names, 1)
    assert [p.hops[0].relation for p in top] == ["directed_by"]
    ranked = fz.rank("release year", paths, names)
    assert ranked[0].path.hops[0].relation == "release_year"
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)
    assert len(ranked) == len(paths)
    embedded = sum(emb.calls)
    fz.rank("release year", paths, names)
    assert sum(emb.calls) == embedded  # everything came from the cache
    assert fz.cache.stats.hits > 0


def test_extract_head_steps_forward_and_from_path_end() -> None:
    p = _nijmegen_path()
    head = extract_head_steps(p, "m.nijmegen", 2)
    assert head is not None and head.hops == p.hops[:2]
    tail = extract_head_steps(p, "m.cvt1", 1)  # entity ends the path: the hop ending at it
    assert tail is not None and tail.hops == p.hops[2:]
    assert extract_head_steps(p, "m.france", 1) is None


async def test_branch_reduce_select_with_fake_selector() -> None:
    g = _star()
    paths = topic_entity_paths(g, ["film"], 2, max_paths=100).paths
    # film -> {directed_by, written_by, release_year} -> second step
    assert {p.hops[0].relation for p in paths} == {"directed_by", "written_by", "release_year"}
    seen: list[list[int]] = []

    async def prefer_people(cands: Sequence[ReasoningPath], w: int) -> list[ReasoningPath]:
        seen.append([c.length for c in cands])
        order = {"directed_by": 0, "written_by": 1}
        ranked = sorted(cands, key=lambda c: (order.get(c.hops[0].relation, 9), c.length))
        return list(ranked[:w])

    res = await branch_reduce_select(paths, ["film"], 2, 3, prefer_people)
    # round 1 selects among 3 one-step branches, keeping directed_by and written_by
    assert seen[0] == [1, 1, 1]
    assert res.rounds[0]["branches"] == 3 and res.rounds[0]["kept"] == 2
    assert {p.hops[0].relation for p in res.paths} <= {"directed_by", "written_by"}
    assert len(res.paths) <= 2 and res.selector_calls == len(seen)
    assert all(p in paths for p in res.paths)


async def test_branch_reduce_two_entities_intersects() -> None:
    ts = [
        Triple("a", "r1", "m1"),
        Triple("m1", "s1", "x"),
        Triple("a", "r2", "m2"),
        Triple("m2", "s2", "x"),
        Triple("a", "r3", "m3"),
        Triple("m3", "s3", "x"),
    ]
    g = ClusteredGraph.from_triples(ts)
    paths = topic_entity_paths(g, ["a", "x"], 1, max_paths=10).paths
    assert len(paths) == 3

    async def keep_r2(cands: Sequence[ReasoningPath], w: int) -> list[ReasoningPath]:
        rel = {"r2", "s2"}
        return [c for c in cands if c.hops[0].relation in rel][:w]

    res = await branch_reduce_select(paths, ["a", "x"], 2, 3, keep_r2)
    assert [[h.relation for h in p.hops] for p in res.paths] == [["r2", "s2"]]


def test_render_lists_clustered_relations() -> None:
    hop = Hop(
        ("m.weeze",), LOC + "containedby", ("m.germany",), True, (), ((LOC + "contains", False),)
    )
    text = render_path(ReasoningPath((hop,)), NIJMEGEN_NAMES, with_ids=False)
    assert text == (
        "{Weeze Airport} -> location.location.containedby | location.location.contains (inverse)"
        " -> {Germany}"
    )


def test_render_paths_sharing_hops_render_as_each_alone() -> None:
    """render_paths keeps each hop's text by identity: prefixes shared between paths, hops
    equal in relation but not in sets, and a backward hop must each render as alone."""
    a = Hop(("m.nijmegen",), LOC + "nearby_airports", ("m.weeze",), True)
    b1 = Hop(("m.weeze",), LOC + "containedby", ("m.germany",), True)
    b2 = Hop(("m.weeze",), LOC + "containedby", ("m.nrw",), True)
    c = Hop(("m.germany",), LOC + "containedby", ("m.weeze",), False)
    paths = [
        ReasoningPath((a,)),
        ReasoningPath((a, b1)),
        ReasoningPath((a, b2)),
        ReasoningPath((a, b1, c)),
        ReasoningPath(()),
    ]
    together = render_paths(paths, NIJMEGEN_NAMES, with_ids=False)
    assert together == [render_path(p, NIJMEGEN_NAMES, with_ids=False) for p in paths[:4]] + [""]
    assert len(set(together)) == 5
