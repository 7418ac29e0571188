"""The bulk hop building of the array path search (lazyhop.HopMaker's groups/sets/hops,
order_free.oriented_key and oriented_paths, fastrestrict.kept_members) gives exactly what the
per-step code it replaced gives: _Steps.codes_of, one NameSet per step, LazyHop.make,
order_free.orient, and a filter over every edge row."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tests.pog.synth_graphs import scrambled_graph

from kgreason.pog.arrays import search as fastpaths
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.arrays.hop_maker import HopMaker
from kgreason.pog.arrays.hops import LazyHop, id_signature
from kgreason.pog.arrays.kernels import paths as kpaths
from kgreason.pog.arrays.orient import oriented_key, oriented_paths
from kgreason.pog.arrays.restrict import kept_members
from kgreason.pog.arrays.steps import LevelSteps, _rows
from kgreason.pog.order_free import orient, reverse_path
from kgreason.pog.paths import find_entity_paths
from kgreason.pog.types import ReasoningPath


@pytest.fixture(scope="module")
def graph() -> ArrayClusteredGraph:
    return scrambled_graph()


def _level_steps(g: ArrayClusteredGraph):
    """The steps of the second level from the hub (partial paths sharing sets, alts)."""
    hub = int(np.argmax(g.degree))
    keep = np.ones(g.n, dtype=bool)
    keep[hub] = False
    lv0 = fastpaths._Level(np.array([-1]), [()], np.array([1]), np.array([hub]))
    st0 = LevelSteps(g, lv0, None, keep, fastpaths._node_hash(g)).steps(0, 1)
    m = len(st0.p)
    sets = fastpaths._reached(st0, np.arange(m))
    groups = [st0.codes_of(i) for i in range(m)]
    lv1 = fastpaths._next_level([st0.p], groups, [sets], m)
    return st0, LevelSteps(g, lv1, lv0, keep, fastpaths._node_hash(g)).steps(0, m)


def test_groups_are_codes_of_and_keys_for_any_subset(graph):
    g = graph
    for st in _level_steps(g):
        assert st.alts  # relation clustering happens here (the test would be idle otherwise)
        m = len(st.p)
        rng = random.Random(1)
        for idx in (np.arange(m), np.array(sorted(rng.sample(range(m), m // 3)))):
            maker = HopMaker(g)
            keys, codes = maker.groups(st, idx.astype(np.int64))
            assert codes == [st.codes_of(i) for i in idx.tolist()]
            assert keys == [tuple(g.key_of(c) for c in cs) for cs in codes]


def test_sets_and_hops_equal_one_by_one(graph):
    g = graph
    st = _level_steps(g)[1]
    maker = HopMaker(g)
    m = len(st.p)
    sets = maker.sets(st.nodes, st.a, st.b)
    one = [maker.set(st.nodes[a:b]) for a, b in zip(st.a.tolist(), st.b.tolist(), strict=True)]
    assert [s.ids.tolist() for s in sets] == [s.ids.tolist() for s in one]
    assert [s.names() for s in sets] == [s.names() for s in one]
    spans = list(zip(st.a.tolist(), st.b.tolist(), strict=True))
    assert len(set(spans)) < m  # some steps share a set here...
    assert len({id(s) for s in sets}) == len(set(spans))  # ...and share its NameSet
    keys, codes = maker.groups(st, np.arange(m))
    made = maker.hops(sets, keys, sets[::-1], [c[0] for c in codes])
    want = [maker.hop(one[i], codes[i], one[m - 1 - i]) for i in range(m)]
    assert made == want
    assert [repr(h) for h in made] == [repr(h) for h in want]
    assert [hash(h) for h in made] == [hash(h) for h in want]
    assert all(type(h) is LazyHop and h.code == w.code for h, w in zip(made, want, strict=True))


def _two_topic_paths(g, rng, n=6):
    nodes = [str(g.names[i]) for i in np.flatnonzero(g.degree > 2)]
    out = []
    for _ in range(n):
        a, b = rng.sample(nodes, 2)
        for order in ((a, b), (b, a)):
            res = find_entity_paths(g, list(order), min_len=1, max_len=4, max_paths=300)
            out += [(p, (a, b)) for p in res.paths]
    return out


def test_oriented_key_and_paths_are_orient(graph):
    g = graph
    found = _two_topic_paths(g, random.Random(3))
    assert len(found) > 50
    chosen = []
    n_rev = 0
    for p, ref in found:
        ranks = {g.index.get(t): i for i, t in enumerate(ref)}
        key, rev = oriented_key(p.hops, ranks)
        o = orient(ReasoningPath(p.hops, ref), ref, id_signature)
        assert key == id_signature(o)
        assert rev == (o.hops != p.hops)
        n_rev += rev
        chosen.append((p.hops, rev))
    assert 0 < n_rev < len(found)  # both outcomes exercised
    ref0 = found[0][1]
    got = oriented_paths(chosen, ref0)
    for g_p, (hops, rev) in zip(got, chosen, strict=True):
        if rev:
            w_p = reverse_path(ReasoningPath(hops, ref0))
            assert g_p == w_p and g_p.entity_list == w_p.entity_list == ref0[::-1]
            assert [repr(h) for h in g_p.hops] == [repr(h) for h in w_p.hops]
            assert [h.code for h in g_p.hops] == [h.code for h in w_p.hops]
        else:
            assert g_p.hops is hops and g_p.entity_list == ref0


@pytest.mark.parametrize(
    ("way", "jit"),
    [("forward", None), ("backward", False), ("backward", True), ("", False), ("", True)],
)
def test_kept_members_equal_a_filter_over_every_edge_row(graph, way, jit):
    if jit:
        pytest.importorskip("numba", reason="numba not installed: the numpy form is tested")
    g = graph
    rng = np.random.default_rng(4)
    k2 = 2 * len(g.rel_names)
    present = np.flatnonzero(g.degree > 0)
    sets = [np.unique(rng.choice(present, size=int(rng.integers(1, 30)))) for _ in range(12)]
    sets.append(np.array([int(np.argmax(g.degree))]))  # a hub
    lens = np.array([len(s) for s in sets], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    pool = np.concatenate(sets)
    # pairs d = (kept set, group of 1-3 keys): mostly keys INTO the set (rows to follow)
    dk = np.array(sorted(rng.integers(0, len(sets), size=40).tolist()), dtype=np.int64)
    groups, mem, d_of = [], [], []
    for d, s in enumerate(dk.tolist()):
        _, key, nb = _rows(g, sets[s], np.zeros(len(sets[s]), dtype=np.int64))
        have = [*np.unique(key ^ 1).tolist(), int(rng.integers(0, k2))]
        size = min(len(have), int(rng.integers(1, 4)))
        groups.append(tuple(sorted(set(rng.choice(have, size=size, replace=False).tolist()))))
        # the ancestor members: some neighbours of the kept set, some anything
        cand = np.unique(np.concatenate([nb[:20], rng.choice(present, size=10)]))
        mem += cand.tolist()
        d_of += [d] * len(cand)
    mem_a, d_a = np.array(mem, dtype=np.int64), np.array(d_of, dtype=np.int64)
    got = kept_members(g, (pool, start, lens), dk, groups, mem_a, d_a, way, jit)
    want = []
    for m, d in zip(mem, d_of, strict=True):
        _, key, nb = _rows(g, np.array([m]), np.zeros(1, dtype=np.int64))
        inside = set(sets[int(dk[d])].tolist())
        want.append(
            any(
                c in groups[d] and v in inside
                for c, v in zip(key.tolist(), nb.tolist(), strict=True)
            )
        )
    assert 20 < sum(want) < len(want) - 20  # both outcomes, many times
    assert got.tolist() == want


@pytest.mark.parametrize("per_pair", [1, 60])
def test_compiled_kept_members_take_either_way_per_pair(graph, per_pair):
    """kernels.paths.kept reads a pair forward when it asks no more lookups than its kept
    set has members, else backward: one query per pair forces forward (every kept set has
    a member), sixty (more than any kept set here) backward, on the same pairs. Both give
    the numpy form's answer."""
    pytest.importorskip("numba", reason="numba not installed: the numpy form is tested")
    g = graph
    rng = np.random.default_rng(9)
    present = np.flatnonzero(g.degree > 0)
    sets = [np.unique(rng.choice(present, size=int(rng.integers(1, 30)))) for _ in range(8)]
    lens = np.array([len(s) for s in sets], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    pool = np.concatenate(sets)
    dk = np.arange(len(sets), dtype=np.int64)
    groups, mem, d_of = [], [], []
    for d, s in enumerate(sets):
        _, key, nb = _rows(g, s, np.zeros(len(s), dtype=np.int64))
        groups.append(tuple(sorted(set((key[:3] ^ 1).tolist()))))
        cand = np.concatenate([nb, rng.choice(present, size=60)])[:per_pair]
        mem += cand.tolist()
        d_of += [d] * len(cand)
    mem_a, d_a = np.array(mem, dtype=np.int64), np.array(d_of, dtype=np.int64)
    want = kept_members(g, (pool, start, lens), dk, groups, mem_a, d_a, "forward")
    got = kept_members(g, (pool, start, lens), dk, groups, mem_a, d_a, "", True)
    assert want.any() and got.tolist() == want.tolist()
    bd = np.array([d for d, cs in enumerate(groups) for _ in cs], dtype=np.int64)
    bc = np.array([c for cs in groups for c in cs], dtype=np.int64)
    loop = kpaths.kept(g, (pool, start, lens), dk, bd, bc, mem_a, d_a)  # (not numpy's)
    assert loop is not None and loop.tolist() == want.tolist()
