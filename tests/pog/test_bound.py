"""The subgraph bound on local stores (PoGSettings.subgraph_bound): "edge-order" takes new
edges in discovery order and stops at the cap, so a hub's first relation can crowd out the
answer's; "relation-aware" shares the cap across (relation, direction) groups so every group
leaving the neighbourhood keeps edges, and says which groups it truncated."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from kgreason.kg.loaders import Source
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store.graph import share_budget
from kgreason.pog.graph import prepare_graph
from kgreason.pog.settings import PoGSettings
from kgreason.pog.subgraph import detect_subgraph_store


@pytest.fixture
def hub_kg(tmp_path):
    """hub -likes-> l0..l59 comes first in the file; hub -born_in-> city -capital_of-> answer
    is two hops out behind it; other people also like the hub (in-edges)."""
    rows = [f"hub\tlikes\tl{i}\n" for i in range(60)]
    rows += ["hub\tborn_in\tcity\n", "city\tcapital_of\tanswer\n"]
    rows += [f"fan{i}\tfollows\thub\n" for i in range(30)]
    rows += [f"l{i}\tknows\tm{i}\n" for i in range(60)]
    (tmp_path / "kg.tsv").write_text("".join(rows))
    build_store([Source(tmp_path / "kg.tsv")], tmp_path / "store")
    return StoreKG(tmp_path / "store")


def _names(kg: StoreKG, eids: np.ndarray) -> set[tuple[str, str, str]]:
    return {(t.head, t.relation, t.tail) for t in kg.triples_of(eids)}


def test_edge_order_cap_drops_the_answer_relation(hub_kg):
    s = PoGSettings(max_subgraph_triples=30, subgraph_bound="edge-order")
    sub, eids = detect_subgraph_store(hub_kg, ["hub"], s, depth=2)
    assert sub.truncated
    got = _names(hub_kg, eids)
    assert not any(r == "born_in" for _, r, _ in got)  # the cap hid the answer's relation


def test_relation_aware_keeps_every_relation_and_the_answer(hub_kg):
    s = PoGSettings(max_subgraph_triples=30, subgraph_bound="relation-aware")
    sub, eids = detect_subgraph_store(hub_kg, ["hub"], s, depth=2)
    got = _names(hub_kg, eids)
    assert len(eids) <= 30 and sub.truncated
    assert {r for _, r, _ in got} >= {"likes", "born_in", "follows", "capital_of"}
    assert ("city", "capital_of", "answer") in got
    # the report names the truncated groups, with kept/total, and the hop
    assert "hop 1" in sub.cut_detail and "likes (out)" in sub.cut_detail
    assert "follows (in)" in sub.cut_detail
    assert "born_in" not in sub.cut_detail  # kept whole, so not reported as truncated
    prep = asyncio.run(prepare_graph(hub_kg, ["hub"], s.model_copy(update={"d_max": 2})))
    assert "answer" in prep.graph
    assert any("likes (out)" in b for b in prep.bounds_hit)


def test_relation_aware_equals_edge_order_without_a_cut(hub_kg):
    for d in (1, 2, 3):
        a = hub_kg.graph.expand(hub_kg.node_ids(["hub"]), d, 1000)
        b = hub_kg.graph.expand_grouped(hub_kg.node_ids(["hub"]), d, 1000)
        assert not a.truncated and not b.truncated
        assert np.array_equal(np.sort(a.eids), np.sort(b.eids))


def test_relation_aware_within_a_group_spreads_over_owners(tmp_path):
    """At hop 2 the 'knows' group holds a's 50 edges first, then b's and c's one each: the
    edge-order cap keeps only a's; the relation-aware one takes every owner's first edge
    before anyone's second."""
    rows = ["t\tr\ta\n", "t\tr\tb\n", "t\tr\tc\n"]
    rows += [f"a\tknows\tx{i}\n" for i in range(50)] + ["b\tknows\ty\n", "c\tknows\tz\n"]
    (tmp_path / "kg.tsv").write_text("".join(rows))
    build_store([Source(tmp_path / "kg.tsv")], tmp_path / "store")
    kg = StoreKG(tmp_path / "store")
    old = kg.graph.expand(kg.node_ids(["t"]), 2, 8)
    new = kg.graph.expand_grouped(kg.node_ids(["t"]), 2, 8)
    assert old.truncated and new.truncated and len(old.eids) == len(new.eids) == 8
    assert not {"y", "z"} & {t.tail for t in kg.triples_of(old.eids)}
    tails = {t.tail for t in kg.triples_of(new.eids)}
    assert {"y", "z"} <= tails and len(tails & {f"x{i}" for i in range(50)}) == 3
    assert [(g.hop, g.kept, g.total) for g in new.groups] == [(2, 5, 52)]


def test_share_budget_water_fills():
    sizes = np.array([100, 1, 5, 50])
    take = share_budget(sizes, 20)
    assert take.sum() == 20 and take[1] == 1 and take[2] == 5
    assert abs(int(take[0]) - int(take[3])) <= 1  # the two big groups share the rest
    assert np.array_equal(share_budget(sizes, 1000), sizes)
    # fewer slots than groups: one edge each for as many groups as fit, smallest first
    t = share_budget(np.array([9, 2, 7, 3]), 2)
    assert t.sum() == 2 and t.max() == 1 and t[1] == 1 and t[3] == 1


def test_default_is_edge_order_and_unknown_bound_rejected():
    assert PoGSettings().subgraph_bound == "edge-order"
    with pytest.raises(ValueError):
        PoGSettings(subgraph_bound="random")


def test_groups_are_relation_paths_from_the_topic(tmp_path):
    """Hop 2's 'c' edges: 20 behind t -a-> u_i, one behind t -b-> v (to the answer). Grouped
    by the hop's relation alone, the answer's edge is one of 21 and is cut; grouped by the
    relation path (a>c vs b>c, PoG's supernodes) it is a group of its own and kept."""
    rows = [f"t\ta\tu{i}\n" for i in range(20)] + ["t\tb\tv\n"]
    rows += [f"u{i}\tc\tw{i}\n" for i in range(20)] + ["v\tc\tans\n"]
    (tmp_path / "kg.tsv").write_text("".join(rows))
    build_store([Source(tmp_path / "kg.tsv")], tmp_path / "store")
    kg = StoreKG(tmp_path / "store")
    seeds = kg.node_ids(["t"])
    flat = kg.graph.expand_grouped(seeds, 2, 26, by_path=False)
    path = kg.graph.expand_grouped(seeds, 2, 26)
    assert len(flat.eids) == len(path.eids) == 26
    assert "ans" not in {t.tail for t in kg.triples_of(flat.eids)}
    assert "ans" in {t.tail for t in kg.triples_of(path.eids)}
    a, c = kg.relations.index("a"), kg.relations.index("c")
    assert [(g.hop, g.rel, g.via, g.kept, g.total) for g in path.groups] == [
        (2, c, ((a, True),), 4, 20)
    ]
    s = PoGSettings(max_subgraph_triples=26, subgraph_bound="relation-aware")
    sub, _ = detect_subgraph_store(kg, ["t"], s, depth=2)
    assert "a (out) > c (out) 4/20" in sub.cut_detail
