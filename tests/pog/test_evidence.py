"""What a result shows of its paths (pog/evidence.py): the array form gives exactly the
reference's members, order, triples and totals, cut or whole, for free paths from one topic
and entity paths joining two; the totals are the full sizes; members are ordered by the
chains through them, not by name."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tests.pog.synth_graphs import synth_graphs, two_hops_from

from kgreason.pog.evidence import shown_paths
from kgreason.pog.order_free import member_support, order_free_paths, ranked_sets
from kgreason.pog.paths import find_entity_paths, materialize


@pytest.fixture(scope="module")
def graphs():
    fast, slow, names, deg = synth_graphs(mirror=400)
    return fast, slow, [names[i] for i in np.flatnonzero(deg > 2)]


def reference(slow, paths, m, t):
    return shown_paths.reference(slow, paths, m, t).paths  # type: ignore[attr-defined]


@pytest.mark.parametrize("bounds", [(5, 7), (1, 1), (None, None), (50, 100)])
def test_array_form_shows_what_the_reference_shows(graphs, bounds):
    fast, slow, nodes = graphs
    rng = random.Random(7)
    seen_cut = 0
    for start in rng.sample(nodes, 12):
        paths = list(find_entity_paths(fast, [start], min_len=1, max_len=3, max_paths=200).paths)[
            :40
        ]
        got = shown_paths(fast, paths, *bounds).paths
        assert got == reference(slow, paths, *bounds), start
        seen_cut += sum(h.dst_total is not None for p in got for h in p.hops)
    for _ in range(6):
        a = rng.choice(nodes)
        b = two_hops_from(slow, a, rng, nodes)
        paths = list(order_free_paths(fast, [a, b], d_max=2, max_paths=200).paths)[:40]
        assert shown_paths(fast, paths, *bounds).paths == reference(slow, paths, *bounds), (a, b)
    if bounds[0] == 1:
        assert seen_cut > 0


def test_totals_are_the_full_sizes_and_members_go_by_chains(graphs):
    _, slow, nodes = graphs
    rng = random.Random(3)
    for start in rng.sample(nodes, 10):
        paths = list(find_entity_paths(slow, [start], min_len=1, max_len=2, max_paths=100).paths)[
            :20
        ]
        full = materialize(slow, paths)
        for p, shown, whole in zip(
            paths,
            shown_paths(slow, paths, 3, 4).paths,
            shown_paths(slow, paths, None, None).paths,
            strict=True,
        ):
            for h, s, w, m in zip(
                p.hops, shown.hops, whole.hops, full[paths.index(p)].hops, strict=True
            ):
                assert s.sizes() == (len(h.src), len(h.dst), len(m.triples))
                assert s.dst == w.dst[:3] and s.triples == w.triples[:4]
                assert set(w.triples) == set(m.triples) and sorted(w.dst) == sorted(h.dst)
            support = member_support(slow, p)
            for j, w in enumerate(whole.hops):
                sup = [support[j].get(v, 0.0) for v in w.dst]
                assert sup == sorted(sup, reverse=True)


@pytest.mark.parametrize("first", [None, 1, 6])
def test_array_ranked_sets_match_the_reference(graphs, first):
    fast, slow, nodes = graphs
    rng = random.Random(11)
    for start in rng.sample(nodes, 10):
        for p in list(find_entity_paths(fast, [start], min_len=1, max_len=3, max_paths=100).paths)[
            :20
        ]:
            want = ranked_sets.reference(slow, p, first)  # type: ignore[attr-defined]
            assert [list(x) for x in ranked_sets(fast, p, first)] == [list(x) for x in want]


def test_whole_sets_come_beside_the_bounded_paths_in_the_same_order(graphs):
    """What a server pages through: each set in full, its first members those shown, the
    same in both forms; the array form's decode only what is sliced."""
    fast, slow, nodes = graphs
    rng = random.Random(5)
    checked = 0
    for start in rng.sample(nodes, 8):
        paths = list(find_entity_paths(fast, [start], min_len=1, max_len=3, max_paths=100).paths)[
            :20
        ]
        got, ref = shown_paths(fast, paths, 2, 3), shown_paths.reference(slow, paths, 2, 3)  # type: ignore[attr-defined]
        whole = shown_paths(slow, paths, None, None).paths
        for p, sets, ref_sets, w in zip(got.paths, got.sets, ref.sets, whole, strict=True):
            assert len(sets) == len(p.hops) + 1
            assert [tuple(s[:]) for s in sets] == [tuple(s) for s in ref_sets]
            assert tuple(sets[0][:]) == w.hops[0].src
            for j, h in enumerate(p.hops):
                assert tuple(sets[j + 1][: len(h.dst)]) == h.dst
                assert len(sets[j + 1]) == h.sizes()[1]
                assert tuple(sets[j + 1][:]) == w.hops[j].dst
                checked += len(sets[j + 1]) > len(h.dst)
            if len(sets[-1]) > 3:
                assert sets[-1][1:3] == tuple(ref_sets[-1][1:3]) and sets[-1][2] == ref_sets[-1][2]
    assert checked > 0
