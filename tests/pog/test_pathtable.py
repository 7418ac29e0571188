"""A free search's paths as a table (pog/arrays/table.py) are the object search's paths: the
same ReasoningPaths whichever way they are read (one by one, sliced, iterated), the same
texts and displayed ids rendered from the arrays as from the objects, and each path made
once."""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest
from tests.pog.synth_graphs import scrambled_graph, synth_graphs

from kgreason.pog.arrays.table import Groups, TablePaths, group_arrays
from kgreason.pog.paths import find_entity_paths
from kgreason.pog.render import displayed_ids, render_paths
from kgreason.pog.types import Hop, ReasoningPath


@pytest.fixture(scope="module")
def graphs():
    fast, slow, names, deg = synth_graphs(mirror=400)
    hubs = [str(names[i]) for i in np.argsort(-deg)[:2]]
    rng = random.Random(4)
    return fast, slow, hubs + rng.sample([str(names[i]) for i in np.flatnonzero(deg)], 6)


def _plain(p: ReasoningPath) -> ReasoningPath:
    return ReasoningPath(
        tuple(Hop(h.src, h.relation, h.dst, h.forward, (), h.alt_relations) for h in p.hops),
        p.entity_list,
    )


def _searches(g, starts, max_paths=400):
    for s in starts:
        for lo, hi in ((1, 3), (3, 3), (1, 2)):
            yield find_entity_paths(g, [s], min_len=lo, max_len=hi, max_paths=max_paths)


def test_table_paths_are_the_set_search_paths(graphs):
    fast, slow, starts = graphs
    bounded = 0
    for a in _searches(fast, starts):
        assert isinstance(a.paths, TablePaths)
        b = find_entity_paths(
            slow, list(a.entity_list), min_len=a.min_len, max_len=a.max_len, max_paths=400
        )
        assert [p.hops for p in a.paths] == [p.hops for p in b.paths]
        assert (a.bound_hit, a.bound_reason, a.expansions) == (
            b.bound_hit,
            b.bound_reason,
            b.expansions,
        )
        bounded += a.bound_hit
    assert bounded  # max_paths stopped some searches mid-length


def test_read_one_by_one_sliced_or_iterated_gives_the_same_objects(graphs):
    fast, _, starts = graphs
    res = find_entity_paths(fast, [starts[0]], min_len=1, max_len=3, max_paths=300)
    paths = res.paths
    n = len(paths)
    assert n > 50
    picked = [paths[i] for i in (0, n // 2, n - 1)]
    assert paths[-1] is picked[-1] and paths[n // 2] is picked[1]
    every = list(paths)
    assert every[0] is picked[0] and every[n // 2] is picked[1] and every[-1] is picked[2]
    assert paths[3:9] == every[3:9] and paths[::50] == every[::50]
    assert paths == every and every == paths
    assert paths + every[:1] == [*every, every[0]] and every[:1] + paths == [every[0], *every]
    fresh = find_entity_paths(fast, [starts[0]], min_len=1, max_len=3, max_paths=300).paths
    one_by_one = [fresh[i] for i in range(len(fresh))]  # per-path objects, no bulk
    assert [p.hops for p in one_by_one] == [p.hops for p in every]
    assert [p.entity_list for p in one_by_one] == [(starts[0],)] * n
    # a path's prefix shares its hop objects (as the object search made them)
    first = {id(p.hops[0]) for p in one_by_one if p.length == 1}
    assert any(id(p.hops[0]) in first for p in one_by_one if p.length == 2)
    with pytest.raises(IndexError):
        paths[n]


@pytest.mark.parametrize(
    "kw",
    [
        {"max_items": 4, "with_ids": False},
        {"max_items": 8},
        {"max_items": None, "max_tokens": 6},
        {"max_items": 5, "max_tokens": 3, "with_ids": False},
        {"max_items": None},
    ],
)
def test_texts_from_the_arrays_are_render_paths_of_the_objects(graphs, kw):
    fast, _, starts = graphs
    alts = 0
    for res in _searches(fast, starts[:5], max_paths=300):
        objs = list(res.paths)
        names = {x: x.upper() for p in objs for h in p.hops for x in h.dst[:2]}
        fresh = find_entity_paths(
            fast, list(res.entity_list), min_len=res.min_len, max_len=res.max_len, max_paths=300
        ).paths
        assert render_paths(fresh, names, **kw) == render_paths(objs, names, **kw)
        assert render_paths(fresh, names, **kw) == render_paths(
            list(map(_plain, objs)), names, **kw
        )
        alts += any(h.alt_relations for p in objs for h in p.hops)
    assert alts  # clustered hops (alternative relations) were rendered


def test_displayed_ids_from_the_arrays(graphs):
    fast, _, starts = graphs
    for res in _searches(fast, starts[:4]):
        objs = list(map(_plain, res.paths))
        fresh = find_entity_paths(
            fast, list(res.entity_list), min_len=res.min_len, max_len=res.max_len, max_paths=400
        ).paths
        for cap, tokens in ((1, None), (8, None), (None, None), (8, 3)):
            assert displayed_ids(fresh, cap, tokens) == displayed_ids(objs, cap, tokens)


def test_scrambled_names_render_in_name_order():
    """Local ids follow name order; a graph whose names do not follow the generator's ids
    still renders each set's first members by name."""
    g = scrambled_graph()
    hub = str(g.names[int(np.argmax(g.degree))])
    res = find_entity_paths(g, [hub], min_len=1, max_len=2, max_paths=500)
    objs = list(map(_plain, find_entity_paths(g, [hub], min_len=1, max_len=2, max_paths=500).paths))
    assert render_paths(res.paths, {}, max_items=3) == render_paths(objs, {}, max_items=3)


def test_groups_read_like_a_list_of_code_tuples():
    g = Groups(np.array([4, 7, 2, 9]), {1: (8, 11), 3: (10,)})
    plain = [(4,), (7, 8, 11), (2,), (9, 10)]
    assert list(g) == plain and len(g) == 4 and g[1] == (7, 8, 11)
    assert list(g[:2]) == plain[:2] and list(g[:0]) == [] and list(g[:10]) == plain
    off, flat = group_arrays(g)
    off2, flat2 = group_arrays(plain)
    assert off.tolist() == off2.tolist() == [0, 1, 4, 5, 7]
    assert flat.tolist() == flat2.tolist() == [4, 7, 8, 11, 2, 9, 10]
    with pytest.raises(ValueError):
        g[1:3]


def test_edge_windows_and_bounds_match_the_set_search():
    """Lengths (max 1, min above max, min 0), max_paths at 0, 1 and exactly at or one past a
    length's last path, and max_level_rows: the same paths, bounds and texts."""
    fast, slow, names, deg = synth_graphs(n=1500, mirror=150)
    rng = random.Random(1)
    starts = [str(names[i]) for i in np.argsort(-deg)[:1]]
    starts += rng.sample([str(names[i]) for i in np.flatnonzero(deg)], 2)
    cases = 0
    for s in starts:
        for lo, hi in ((1, 1), (2, 1), (0, 2), (3, 3), (1, 3)):
            lens = [
                p.length
                for p in find_entity_paths(slow, [s], min_len=lo, max_len=hi, max_paths=10**6).paths
            ]
            bounds = {0, 1, len(lens)}
            for k in set(lens):
                at = sum(x <= k for x in lens)
                bounds |= {at, at + 1}
            for mp in sorted(bounds):
                for rows in (None, 200):
                    kw = {"min_len": lo, "max_len": hi, "max_paths": mp, "max_level_rows": rows}
                    a = find_entity_paths(fast, [s], **kw)
                    b = find_entity_paths(slow, [s], **kw)
                    assert [p.hops for p in a.paths] == [p.hops for p in b.paths], (s, kw)
                    assert (a.bound_hit, a.bound_reason, a.expansions) == (
                        b.bound_hit,
                        b.bound_reason,
                        b.expansions,
                    )
                    if len(a.paths):
                        objs = [_plain(p) for p in b.paths]
                        for cap in (0, 3):
                            assert render_paths(a.paths, {}, max_items=cap) == render_paths(
                                objs, {}, max_items=cap
                            )
                    cases += 1
    assert cases > 100


def test_paths_pickle_and_copy_as_the_list_of_their_paths(graphs):
    """A search's TablePaths pickles, copies and compares as a list does (not with the
    question graph the table holds; never equal to a tuple, as a list is not)."""
    fast, _, starts = graphs
    res = find_entity_paths(fast, [starts[0]], min_len=1, max_len=2, max_paths=60)
    paths, every = res.paths, list(res.paths)
    back = pickle.loads(pickle.dumps(paths))
    assert type(back) is list and [p.hops for p in back] == [p.hops for p in every]
    assert type(copy.copy(paths)) is list and copy.deepcopy(res).paths == every
    assert paths != tuple(every) and paths[::-3] == every[::-3] and paths[-5:] == every[-5:]
    assert paths[np.int64(-2)] is every[-2] and paths[True] is every[1]
