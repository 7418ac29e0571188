"""Distinct-set expansion in path search (pog/arrays/steps.py): exact set identity even when
hashes collide, and the same paths as paths.py's set-based search when many partial paths
share a set and backtracking changes only some of them."""

from __future__ import annotations

import random

import numpy as np
import pytest
from tests.pog.synth_graphs import synth_graphs

from kgreason.kg.base import Triple
from kgreason.pog.arrays import distinct as fastdistinct
from kgreason.pog.arrays import search as fastpaths
from kgreason.pog.arrays import set_ids as setids
from kgreason.pog.arrays import steps as fastsets
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.arrays.set_ids import _MIX, canon
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.paths import find_entity_paths


def test_canon_exact_under_hash_collisions():
    sets = [[1, 2, 3], [1, 2, 4], [1, 2, 3], [5], [1, 2, 4], [], [5], [6]]
    nodes = np.array([x for s in sets for x in s], dtype=np.int64)
    lens = np.array([len(s) for s in sets], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    # the third: every (hash, size) sort key collides (canon mixes the size into the hash)
    mixed = lens.astype(np.uint64) * _MIX
    for h in (
        np.zeros(len(sets), dtype=np.uint64),
        np.arange(len(sets), dtype=np.uint64) % 2,
        mixed,
    ):
        got = canon(nodes, start, lens, h)
        want = [sets.index(s) for s in sets]
        # equal hashes of unequal sets are settled exactly; unequal hashes never merge
        if h.any():
            want = [
                next(j for j in range(len(sets)) if sets[j] == s and h[j] == h[i])
                for i, s in enumerate(sets)
            ]
        assert got.tolist() == want


def test_canon_prefix_set_with_colliding_key_is_not_equal():
    """[1, 2] is a prefix of [1, 2, 3]: were sizes not compared, a colliding sort key would
    make them one set (comparing the shorter set's two elements only)."""
    nodes = np.array([1, 2, 3, 1, 2], dtype=np.int64)
    start, lens = np.array([0, 3], dtype=np.int64), np.array([3, 2], dtype=np.int64)
    assert canon(nodes, start, lens, lens.astype(np.uint64) * _MIX).tolist() == [0, 1]


def _graphs():
    """Two hubs joined by many parallel relations and shared leaves: many partial paths
    end in the same set, and backtracking keys differ between them."""
    rng = random.Random(5)
    triples = set()
    leaves = [f"l{i}" for i in range(40)]
    for r in range(12):  # hub a -> (same leaves) under many relations: one set, many paths
        for v in leaves[: 10 + (r % 3)]:
            triples.add(Triple("a", f"r{r:02d}", v))
    for v in leaves:
        triples.add(Triple(v, "back", "a"))  # reverses into the previous set
        for _ in range(2):
            triples.add(Triple(v, f"s{rng.randrange(4)}", rng.choice(leaves)))
        triples.add(Triple(v, "to_b", "b"))
    for i in range(6):
        triples.add(Triple("b", "x", f"m{i}"))
        triples.add(Triple(f"m{i}", "y", "a"))
    triples = sorted(triples)
    slow = ClusteredGraph.from_triples(triples)
    names = sorted({x for t in triples for x in (t.head, t.tail)})
    idx = {v: i for i, v in enumerate(names)}
    rels = sorted({t.relation for t in triples})
    ridx = {r: i for i, r in enumerate(rels)}
    h = np.array([idx[t.head] for t in triples], dtype=np.int64)
    r = np.array([ridx[t.relation] for t in triples], dtype=np.int64)
    t_ = np.array([idx[t.tail] for t in triples], dtype=np.int64)
    fast = ArrayClusteredGraph.from_arrays(h, r, t_, np.array(names, dtype=object), rels)
    return fast, slow


@pytest.fixture(params=["distinct-sets", "distinct-sets-batched", "per-path"])
def level_mode(request, monkeypatch):
    """Both level expansions: LevelSteps (threshold 0) and _RowSteps (every level small);
    "batched": LevelSteps reading a few rows per batch and a few partial paths per chunk, so
    batches and chunks are joined over one level pool (fastsegs.Pool)."""
    monkeypatch.setattr(
        fastpaths, "SMALL_LEVEL_ROWS", 1 << 40 if request.param == "per-path" else 0
    )
    if request.param == "distinct-sets-batched":
        monkeypatch.setattr(fastdistinct, "BATCH_ROWS", 7)
        monkeypatch.setattr(fastsets, "CHUNK_PATHS", 3)
        monkeypatch.setattr(fastsets, "SEGMENT_CHUNK_PATHS", 3)
    return request.param


@pytest.mark.parametrize("collide", [False, True])
def test_shared_sets_same_paths(monkeypatch, collide, level_mode):
    fast, slow = _graphs()
    if collide:  # every set hashes alike: only the exact comparison separates them
        monkeypatch.setattr(fastpaths, "_node_hash", lambda g: np.zeros(g.n, dtype=np.uint64))
    shared = 0
    for ents, lo, hi in ((["a", "b"], 1, 4), (["a"], 1, 3), (["b", "a"], 1, 4), (["a"], 2, 3)):
        for max_paths in (3, 50, 5000):
            a = find_entity_paths(fast, ents, min_len=lo, max_len=hi, max_paths=max_paths)
            b = find_entity_paths(slow, ents, min_len=lo, max_len=hi, max_paths=max_paths)
            assert [p.hops for p in a.paths] == [p.hops for p in b.paths], (ents, max_paths)
            assert (a.bound_hit, a.bound_reason, a.expansions) == (
                b.bound_hit,
                b.bound_reason,
                b.expansions,
            )
            shared += sum(len(h.alt_relations) for p in a.paths for h in p.hops)
    assert shared  # relation clustering (keys reaching one set) was exercised


def test_synthetic_kg_both_expansions(level_mode):
    """A skewed synthetic KG (hubs), free and segment search, small and large bounds."""
    fast, slow, names, deg = synth_graphs()
    nodes = [names[i] for i in np.argsort(-deg)[:4]] + [
        names[i] for i in np.flatnonzero(deg > 0)[::400]
    ]
    rng = random.Random(2)
    found = 0
    for a in nodes:
        b = rng.choice(nodes)
        for ents, lo, hi in (([a], 1, 3), ([a, b] if a != b else [a], 1, 6)):
            for max_paths in (9, 2000):
                x = find_entity_paths(fast, ents, min_len=lo, max_len=hi, max_paths=max_paths)
                y = find_entity_paths(slow, ents, min_len=lo, max_len=hi, max_paths=max_paths)
                assert [p.hops for p in x.paths] == [p.hops for p in y.paths], (ents, max_paths)
                assert (x.bound_hit, x.bound_reason, x.expansions) == (
                    y.bound_hit,
                    y.bound_reason,
                    y.expansions,
                )
                found += len(ents) == 2 and bool(x.paths)
    assert found


def test_carried_set_hashes_are_the_sets_hashes(monkeypatch, level_mode):
    """A level's set hashes carried over from the steps that made it (t's hash taken out of
    a segment search's sets) equal the hashes of its sets as stored."""
    if level_mode == "per-path":
        pytest.skip("_RowSteps levels read no hashes")
    fast, _, names, deg = synth_graphs()
    init = fastsets.LevelSteps.__init__
    checked = []

    def checking_init(self, g, lv, prev, keep, hv, t=-1, rows=None, kept=None):
        if lv.h is not None:
            off = lv.offsets()
            want = setids._hash_sets(hv, lv.nodes, off[:-1], lv.lens)
            np.testing.assert_array_equal(lv.h, want)
            checked.append(len(lv.lens))
        init(self, g, lv, prev, keep, hv, t, rows, kept)

    monkeypatch.setattr(fastsets.LevelSteps, "__init__", checking_init)
    hubs = [names[i] for i in np.argsort(-deg)[:3]]
    for ents, hi in (([hubs[0]], 3), ([hubs[0], hubs[1]], 5), ([hubs[2], hubs[0]], 5)):
        find_entity_paths(fast, ents, min_len=1, max_len=hi, max_paths=2000)
    assert len(checked) >= 3 and sum(checked) > 100


def _count_hits_only(monkeypatch) -> dict[str, int]:
    """Forces LevelSteps with chunks of 2 partial paths; counts the hits-only reads."""
    monkeypatch.setattr(fastpaths, "SMALL_LEVEL_ROWS", 0)
    monkeypatch.setattr(fastsets, "SEGMENT_CHUNK_PATHS", 2)
    calls = {"hits_only": 0}
    steps = fastsets.LevelSteps.steps

    def counting(self, p0, p1, hits_only=False):
        calls["hits_only"] += hits_only
        return steps(self, p0, p1, hits_only)

    monkeypatch.setattr(fastsets.LevelSteps, "steps", counting)
    return calls


def test_hits_only_chunks_give_the_same_paths(monkeypatch):
    """Once a segment-search level has made max_paths + 1 partial paths, its later chunks
    are read for their hits only (LevelSteps.steps(hits_only=True): only the keys by which
    a member reaches the target are expanded). Small chunks and small bounds force that
    path; the paths, bounds and reasons are paths.py's."""
    calls = _count_hits_only(monkeypatch)
    fast, slow, names, deg = synth_graphs()
    hubs = [names[i] for i in np.argsort(-deg)[:6]]
    pairs = [(a, b) for a in hubs for b in hubs if a != b][:10]
    a_fast, b_slow = _graphs()
    cases = [(a_fast, b_slow, ["a", "b"]), (a_fast, b_slow, ["b", "a"])]
    cases += [(fast, slow, list(p)) for p in pairs]
    for f, s, ents in cases:
        for max_paths in (1, 4, 30):
            x = find_entity_paths(f, ents, min_len=1, max_len=4, max_paths=max_paths)
            y = find_entity_paths(s, ents, min_len=1, max_len=4, max_paths=max_paths)
            assert [p.hops for p in x.paths] == [p.hops for p in y.paths], (ents, max_paths)
            assert (x.bound_hit, x.bound_reason, x.expansions) == (
                y.bound_hit,
                y.bound_reason,
                y.expansions,
            )
    assert calls["hits_only"] > 5


def test_level_found_too_big_midway_reads_the_rest_for_hits(monkeypatch):
    """Once the partial paths a segment-search level has made already read more than
    max_level_rows edge rows, the next level will not be searched: the rest of this level
    is read for its hits only (the attack: a bound between the first partial paths' rows
    and the whole level's). The paths, expansions and reason (which names the first
    partial paths past the bound, and takes precedence over the partial-path bound) are
    paths.py's."""
    calls = _count_hits_only(monkeypatch)
    fast, slow, names, deg = synth_graphs()
    hubs = [names[i] for i in np.argsort(-deg)[:6]]
    pairs = [(a, b) for a in hubs for b in hubs if a != b][:10]
    reasons = set()
    for ents in pairs:
        full = find_entity_paths(slow, list(ents), min_len=1, max_len=4, max_paths=20_000)
        for bound in (200, 1_000, 5_000, 20_000):
            for max_paths in (8, 20_000):
                kw = {"min_len": 1, "max_len": 4, "max_paths": max_paths}
                x = find_entity_paths(fast, list(ents), max_level_rows=bound, **kw)
                y = find_entity_paths(slow, list(ents), max_level_rows=bound, **kw)
                assert [p.hops for p in x.paths] == [p.hops for p in y.paths], (ents, bound)
                assert (x.bound_hit, x.bound_reason, x.expansions) == (
                    y.bound_hit,
                    y.bound_reason,
                    y.expansions,
                )
                if "max_level_rows" in x.bound_reason and max_paths == 20_000:
                    reasons.add(x.bound_reason)
                    # what was found is the unbounded search's, up to the cut length
                    k = int(x.bound_reason.split("length ")[1].split()[0])
                    want = [p.hops for p in full.paths if p.length < k]
                    assert [p.hops for p in x.paths] == want
    assert calls["hits_only"] > 5
    assert reasons and all("its first" in r for r in reasons)


def test_levels_expanded_in_thread_parts_give_the_same_paths(monkeypatch):
    """A level of PARALLEL_ROWS member rows or more is expanded in parts, one per kernel
    thread, at once (fastsegs.expand_many): the paths, bounds and reasons are paths.py's.
    A tiny threshold and three threads force that path on the synthetic graph."""
    from kgreason.pog.arrays import segments as fastsegs

    monkeypatch.setenv("KGREASON_JIT", "1")
    monkeypatch.setenv("KGREASON_JIT_THREADS", "3")
    monkeypatch.setattr(fastpaths, "SMALL_LEVEL_ROWS", 0)
    monkeypatch.setattr(fastdistinct, "PARALLEL_ROWS", 2)
    runs = {"threaded": 0}
    many = fastsegs.expand_many

    def counting(g, jobs, keep, hv, bad_cum, out, n_threads=1, rows=None):
        runs["threaded"] += n_threads > 1 and len(jobs) > 1
        assert rows == [int(g.degree[m].sum()) for m, _ in jobs]  # the caller's sums
        return many(g, jobs, keep, hv, bad_cum, out, n_threads, rows)

    monkeypatch.setattr(fastdistinct, "expand_many", counting)
    fast, slow, names, deg = synth_graphs()
    hubs = [names[i] for i in np.argsort(-deg)[:4]]
    for ents in ([hubs[0]], [hubs[1]], [hubs[0], hubs[2]], [hubs[3], hubs[1]]):
        for max_paths in (5, 300):
            x = find_entity_paths(fast, ents, min_len=1, max_len=3, max_paths=max_paths)
            y = find_entity_paths(slow, ents, min_len=1, max_len=3, max_paths=max_paths)
            assert [p.hops for p in x.paths] == [p.hops for p in y.paths], (ents, max_paths)
            assert (x.bound_hit, x.bound_reason) == (y.bound_hit, y.bound_reason)
    assert runs["threaded"] > 3


def test_kept_prefix_is_recounted_for_another_mask_only():
    """KeptPrefix (the free search's levels share one mask's counts): a second mask object,
    even with equal contents, is counted afresh; the same object is not counted again."""
    g, _ = _graphs()
    pool = fastsets.segment_table(g).pool
    keep = np.ones(g.n, dtype=bool)
    keep[[0, 3]] = False
    kept = fastsets.KeptPrefix()
    first = kept.of(g, keep)
    assert first.tolist() == np.concatenate([[0], np.cumsum(~keep[pool])]).tolist()
    assert kept.of(g, keep) is first
    other = np.ones(g.n, dtype=bool)
    other[1] = False
    again = kept.of(g, other)
    assert again.tolist() == np.concatenate([[0], np.cumsum(~other[pool])]).tolist()
    assert again[-1] == int((pool == 1).sum())
