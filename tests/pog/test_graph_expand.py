"""Node-expand exploration: 1-hop neighbours from the full KG merged into paths."""

from __future__ import annotations

from tests.pog.graph_fixtures import nijmegen_kg

from kgreason.pog.expand import extract_entities, node_expand
from kgreason.pog.types import Hop, ReasoningPath

LOC = "location.location."


def _airport_path() -> ReasoningPath:
    return ReasoningPath(
        (Hop(("m.nijmegen",), LOC + "nearby_airports", ("m.weeze",), True),), ("m.nijmegen",)
    )


async def test_node_expand_appends_clustered_hops_from_the_full_kg() -> None:
    kg = nijmegen_kg()
    p = _airport_path()
    assert extract_entities([p], {"m.nijmegen"}) == ["m.weeze"]
    res = await node_expand(kg, [p], {"m.nijmegen"})
    assert res.expanded == ["m.weeze"]
    assert res.paths[0] == p and res.paths[1:] == res.new_paths
    (new,) = res.new_paths  # the way back to Nijmegen is on the prefix, so not re-entered
    assert new.hops[0] == p.hops[0]
    hop = new.hops[1]
    assert (hop.src, hop.relation, hop.dst, hop.forward) == (
        ("m.weeze",),
        LOC + "containedby",
        ("m.germany", "m.nrw"),
        True,
    )
    assert all(await kg.contains(list(hop.triples)))
    assert len(hop.triples) == 2


async def test_node_expand_from_middle_entity_forks_and_bounds_are_named() -> None:
    kg = nijmegen_kg()
    p = _airport_path()
    res = await node_expand(kg, [p], set())  # Nijmegen itself is expanded too
    firsts = {(q.length, q.hops[-1].relation, q.hops[-1].src) for q in res.new_paths}
    assert (1, LOC + "containedby", ("m.nijmegen",)) in firsts  # fork at the start
    assert (2, LOC + "containedby", ("m.weeze",)) in firsts
    # a fork from Nijmegen clusters both of its airports into one hop
    forks = {q.hops[0].dst for q in res.new_paths if q.length == 1}
    assert ("m.eindhoven_ap", "m.weeze") in forks
    bounded = await node_expand(kg, [p], set(), max_entities=1)
    assert bounded.expanded == ["m.nijmegen"] and bounded.bounds_hit
    assert "expanded the first 1" in bounded.bounds_hit[0]
    # second round: visited grows, nothing is expanded twice
    visited = set(res.expanded)
    again = await node_expand(kg, res.paths, visited)
    assert not set(again.expanded) & visited
