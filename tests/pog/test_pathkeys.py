"""pathkeys.choose (order_free's orientation, dedup and cut on arrays) gives exactly what
the per-path reference gives: order_free.oriented_key per path, the first path of each
key kept, keys sorted by (length, key), the first max_paths; and lazyhop's bulk helpers
(sort_by_codes, make_paths) equal the per-path code they replaced."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tests.pog.synth_graphs import scrambled_graph

from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.arrays.hop_maker import make_paths, sort_by_codes
from kgreason.pog.arrays.orient import choose_lazy
from kgreason.pog.order_free import order_free_paths
from kgreason.pog.paths import find_entity_paths
from kgreason.pog.types import ReasoningPath


@pytest.fixture(scope="module")
def graph() -> ArrayClusteredGraph:
    return scrambled_graph()


def _found(g, topics, max_len=4, max_paths=300):
    """The LazyHop paths of every order of `topics`, in the order order_free meets them."""
    out = []
    for order in (topics, topics[::-1]):
        res = find_entity_paths(g, list(order), min_len=1, max_len=max_len, max_paths=max_paths)
        out += [p.hops for p in res.paths]
    return out


def _same(a, b):
    (ca, na), (cb, nb) = a, b
    assert na == nb
    assert len(ca) == len(cb)
    for (ha, ra), (hb, rb) in zip(ca, cb, strict=True):
        assert ha is hb and ra == rb


@pytest.mark.parametrize("seed", range(5))
def test_choose_equals_the_per_path_reference(graph, seed):
    g = graph
    rng = random.Random(seed)
    nodes = [str(g.names[i]) for i in np.flatnonzero(g.degree > 2)]
    n_rev = n_checked = 0
    for _ in range(8):
        topics = rng.sample(nodes, 2 + (seed % 2))  # two or three topics
        paths = _found(g, topics)
        if len(topics) == 3:
            paths += _found(g, topics[1:] + topics[:1])
        if not paths:
            continue
        paths += [paths[i] for i in rng.sample(range(len(paths)), len(paths) // 4)]  # repeats
        ranks = {g.index.get(t): i for i, t in enumerate(topics)}
        # no topic known: every orientation ties on the topics and the signature decides
        for rk in (ranks, {}):
            for max_paths in (len(paths) + 5, max(1, len(paths) // 3), 1):
                want = choose_lazy(paths, rk, max_paths, bulk=False)
                got = choose_lazy(paths, rk, max_paths, bulk=True)
                _same(got, want)
                n_rev += sum(r for _, r in want[0])
                n_checked += len(want[0])
    assert n_checked > 50 and 0 < n_rev < n_checked  # both orientations exercised


def test_choose_orients_by_the_topics_and_breaks_ties_by_signature(graph):
    """The reference order of the topics decides the orientation: reversing it reverses
    the choice of every path whose ends are the two topics."""
    g = graph
    nodes = [str(g.names[i]) for i in np.flatnonzero(g.degree > 2)]
    rng = random.Random(9)
    for _ in range(10):
        a, b = rng.sample(nodes, 2)
        paths = _found(g, [a, b])
        if len(paths) > 20:
            break
    for ref in ((a, b), (b, a)):
        ranks = {g.index.get(t): i for i, t in enumerate(ref)}
        _same(
            choose_lazy(paths, ranks, 10_000, bulk=True),
            choose_lazy(paths, ranks, 10_000, bulk=False),
        )
    fwd = dict(choose_lazy(paths, {g.index.get(a): 0, g.index.get(b): 1}, 10_000)[0])
    back = dict(choose_lazy(paths, {g.index.get(b): 0, g.index.get(a): 1}, 10_000)[0])
    assert any(fwd[h] != back[h] for h in fwd.keys() & back.keys())


def test_order_free_paths_same_with_either_form(graph, monkeypatch):
    from kgreason.pog.arrays import orient

    g = graph
    nodes = [str(g.names[i]) for i in np.flatnonzero(g.degree > 2)]
    rng = random.Random(2)
    for _ in range(6):
        topics = rng.sample(nodes, 2)
        runs = []
        for bulk in (0, 10**9):
            monkeypatch.setattr(orient, "BULK_PATHS", bulk)
            r = order_free_paths(g, topics, d_max=2, max_paths=150, reference=topics)
            runs.append(
                (
                    [(tuple(map(repr, p.hops)), p.entity_list) for p in r.paths],
                    r.bound_hit,
                    r.bound_reason,
                )
            )
        assert runs[0] == runs[1]


def test_sort_by_codes_and_make_paths_equal_the_per_path_code(graph):
    g = graph
    nodes = [str(g.names[i]) for i in np.flatnonzero(g.degree > 2)]
    rng = random.Random(4)
    chains = []
    for _ in range(5):
        chains += _found(g, rng.sample(nodes, 2), max_paths=100)
    rng.shuffle(chains)
    assert len({len(c) for c in chains}) > 1
    want = sorted(chains, key=lambda c: (len(c), [h.code ^ 1 for h in c]))
    got = sort_by_codes(chains)
    assert [id(c) for c in got] == [id(c) for c in want]  # stable among equal keys too
    ents = ("a", "b")
    made = make_paths(got, ents)
    plain = [ReasoningPath(c, ents) for c in got]
    assert made == plain
    assert [repr(p) for p in made] == [repr(p) for p in plain]
    assert [hash((p.hops, p.entity_list)) for p in made] == [hash(p) for p in plain]
    fields = ReasoningPath.__slots__  # every field set, and set alike
    assert all(
        type(p) is ReasoningPath
        and [getattr(p, f) for f in fields] == [getattr(q, f) for f in fields]
        for p, q in zip(made, plain, strict=True)
    )
