"""LazyHop (pog/arrays/hops.py): the array search's hops decode entity names only when read,
and behave exactly like the Hop holding the same names (equality, hash, repr, replace,
pickle, asdict, rendering, path signatures and their order)."""

from __future__ import annotations

import dataclasses
import pickle
import random

import numpy as np
import pytest

from kgreason.kg.base import Triple
from kgreason.kg.synthetic import synth_kg
from kgreason.pog.arrays.graph import ArrayClusteredGraph, NodeNames
from kgreason.pog.arrays.hops import LazyHop, id_signature
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.fuzzy import EMBED_MAX_ITEMS
from kgreason.pog.order_free import orient, reverse_hop, reverse_path
from kgreason.pog.paths import find_entity_paths, path_signature
from kgreason.pog.render import displayed_ids, render_path
from kgreason.pog.types import Hop, ReasoningPath


@pytest.fixture(scope="module")
def kg_arrays():
    kg = synth_kg(3_000, seed=5)
    # names whose code-point order differs from id order, some sharing prefixes
    names = np.array([f"e{(i * 7919) % 100_003}" for i in range(kg.n_nodes)], dtype=object)
    h, r, t = (x.astype(np.int64) for x in (kg.h, kg.r, kg.t))
    return h, r, t, names, list(kg.rel_names)


def _counting(g: ArrayClusteredGraph) -> list[int]:
    """Replace g's names by a NodeNames that records how many names each decode reads."""
    table = np.array(g.names.tolist(), dtype=object)
    calls: list[int] = []

    def decode(ids: np.ndarray) -> list[str]:
        calls.append(len(ids))
        return table[ids].tolist()  # type: ignore[no-any-return]

    g.names = NodeNames(g.n, decode)
    return calls


def _hub(g: ArrayClusteredGraph) -> str:
    return str(g.names[int(np.argmax(g.degree))])


def _paths(kg_arrays, ents=None, lo=1, hi=3, max_paths=2000):
    g = ArrayClusteredGraph.from_arrays(*kg_arrays)
    ents = ents or [_hub(g)]
    calls = _counting(g)
    res = find_entity_paths(g, ents, min_len=lo, max_len=hi, max_paths=max_paths)
    return g, calls, res


def _plain(p: ReasoningPath) -> ReasoningPath:
    return ReasoningPath(tuple(h.concrete() for h in p.hops), p.entity_list)  # type: ignore[attr-defined]


def test_search_decodes_no_name_and_renders_decode_only_shown_members(kg_arrays):
    _, calls, res = _paths(kg_arrays)
    assert len(res.paths) > 100
    assert all(isinstance(h, LazyHop) for p in res.paths for h in p.hops)
    assert calls == []  # the search itself decodes nothing
    texts = [render_path(p, {}, max_items=EMBED_MAX_ITEMS, with_ids=False) for p in res.paths]
    lazy = [h for p in res.paths for h in p.hops]
    assert any(len(h.dst_set) > EMBED_MAX_ITEMS for h in lazy)  # type: ignore[attr-defined]
    sets = {id(h.dst_set) for h in lazy} | {id(res.paths[0].hops[0].src_set)}  # type: ignore[attr-defined]
    assert 0 < sum(calls) <= EMBED_MAX_ITEMS * len(sets)
    assert sum(calls) < sum(len(h.dst_set) for h in lazy) / 4  # type: ignore[attr-defined]
    # the same texts as from plain Hops holding every name (decoded now)
    plain = [_plain(p) for p in res.paths]
    assert texts == [render_path(p, {}, max_items=EMBED_MAX_ITEMS, with_ids=False) for p in plain]


def test_rendering_and_displayed_ids_match_plain_hops(kg_arrays):
    _, _, res = _paths(kg_arrays, max_paths=300)
    plain = [_plain(p) for p in res.paths]
    names = {n: n.upper() for p in plain for h in p.hops for n in h.dst[:3]}
    for kw in (
        {"max_items": 8},
        {"max_items": 2, "with_ids": False},
        {"max_items": None, "max_tokens": 6},
        {"max_items": 5, "max_tokens": 3},
        {"max_items": None},
    ):
        assert [render_path(p, names, **kw) for p in res.paths] == [
            render_path(p, names, **kw) for p in plain
        ]
    for cap in (1, 8, None):
        assert displayed_ids(res.paths, cap) == displayed_ids(plain, cap)


def test_lazy_hop_is_the_hop_with_the_same_names(kg_arrays):
    _, _, res = _paths(kg_arrays, max_paths=200)
    hops = [h for p in res.paths for h in p.hops]
    alt = next((h for h in hops if h.alt_relations), None)
    for h in [hops[0], hops[-1], *([alt] if alt else [])]:
        c = h.concrete()  # type: ignore[attr-defined]
        assert type(c) is Hop and isinstance(h, Hop)
        assert h == c and c == h and (h != c) is False and hash(h) == hash(c)
        assert repr(h) == repr(c)
        assert dataclasses.asdict(h) == dataclasses.asdict(c)
        assert dataclasses.fields(h) == dataclasses.fields(c)
        t = Triple("a", "r", "b")
        r = dataclasses.replace(h, triples=(t,))
        assert type(r) is Hop and r == dataclasses.replace(c, triples=(t,))
        back = pickle.loads(pickle.dumps(h))
        assert type(back) is Hop and back == c
        assert reverse_hop(h) == reverse_hop(c)
        assert h != reverse_hop(h) and c != reverse_hop(h)
        assert h != dataclasses.replace(c, triples=(t,))
        with pytest.raises(dataclasses.FrozenInstanceError):
            h.src = ()  # type: ignore[misc]
    assert len({*hops, *(h.concrete() for h in hops)}) == len(set(hops))  # type: ignore[attr-defined]


def test_id_signature_orders_and_equals_like_path_signature(kg_arrays):
    g, _, res = _paths(kg_arrays, max_paths=400)
    rng = random.Random(2)
    nodes = [str(g.names[i]) for i in np.flatnonzero(g.degree > 2)]
    two = find_entity_paths(g, rng.sample(nodes, 2), min_len=1, max_len=4, max_paths=400)
    paths = res.paths + two.paths
    paths += [reverse_path(p) for p in paths[::7]] + paths[::5]  # reversed and repeated
    rng.shuffle(paths)
    key_ids = sorted(range(len(paths)), key=lambda i: (id_signature(paths[i]), i))
    key_names = sorted(range(len(paths)), key=lambda i: (path_signature(paths[i]), i))
    assert key_ids == key_names
    assert len({id_signature(p) for p in paths}) == len({path_signature(p) for p in paths})
    topics = (two.entity_list[1], two.entity_list[0])
    for p in two.paths:
        o = orient(ReasoningPath(p.hops, topics), topics, id_signature)
        assert o == orient(_plain(ReasoningPath(p.hops, topics)), topics)


def test_array_and_set_search_agree_on_renders(kg_arrays):
    """The lazily named search renders exactly what the set-based search renders."""
    h, r, t, names, rels = kg_arrays
    g = ArrayClusteredGraph.from_arrays(h, r, t, names, rels)
    slow = ClusteredGraph.from_triples(
        Triple(names[a], rels[b], names[c]) for a, b, c in zip(h, r, t, strict=True)
    )
    hub = _hub(g)
    a = find_entity_paths(g, [hub], min_len=1, max_len=2, max_paths=500)
    b = find_entity_paths(slow, [hub], min_len=1, max_len=2, max_paths=500)
    assert [render_path(p, {}, max_items=4) for p in a.paths] == [
        render_path(p, {}, max_items=4) for p in b.paths
    ]
