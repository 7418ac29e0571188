"""CSRGraph.expand's fast walk (pooled stamped masks, pair dedupe, neighbours only for new
rows) against a plain reference of the same rule, field by field, cut report included; the
scratch pool under threads, stamp wrap-around and a failed walk; the radix sorts."""

from __future__ import annotations

import contextlib
import random
import threading
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from kgreason.kg.loaders import Source
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store import build as store_build
from kgreason.kg.store import graph as graph_mod
from kgreason.kg.store import walk as walk_mod
from kgreason.kg.store.bound import radix_argsort, unique_inverse_counts
from kgreason.kg.store.build_index import key_ranks
from kgreason.kg.store.graph import CSRGraph, Edges, Expansion
from kgreason.kg.store.walk import ScratchPool, slice_owner, sort_edge_ids

FIELDS = (
    "truncated",
    "reason",
    "cut_hop",
    "unread_edges",
    "left_out_relations",
    "left_out_entities",
    "left_out_exact",
)


def _first(values: np.ndarray) -> np.ndarray:
    _, i = np.unique(values, return_index=True)
    return values[np.sort(i)]


def reference_expand(g: CSRGraph, seeds: np.ndarray, depth: int, cap: int) -> Expansion:
    """The edge-order rule, written plainly on gather/positions (the pre-pool walk): slices
    of max(CHUNK_EDGES, 2 * remaining) rows; on a cut, the left-out scan of the rows after
    the first edge not taken."""
    chunk_edges, scan = graph_mod.CHUNK_EDGES, graph_mod.LEFT_OUT_SCAN
    frontier = _first(np.asarray(seeds, dtype=np.int64))
    visited = np.zeros(g.n_nodes, dtype=bool)
    visited[frontier] = True
    seen = np.zeros(g.n_edges, dtype=bool)
    found: list[np.ndarray] = []
    count = 0
    for level in range(depth):
        nxt = []
        dout, din = g.degree(frontier)
        level_edges, read = int(dout.sum() + din.sum()), 0
        budget = max(chunk_edges, 2 * (cap - count))
        cum = np.cumsum(dout + din)
        chunks = [frontier]
        if len(cum) and cum[-1] > budget:
            cuts = np.searchsorted(cum, np.arange(budget, int(cum[-1]), budget)) + 1
            chunks = [c for c in np.split(frontier, np.unique(cuts)) if len(c)]
        for ci, chunk in enumerate(chunks):
            pos, owner = g.positions(chunk)
            a = 0
            while a < len(pos):
                b = a + max(chunk_edges, 2 * (cap - count))
                ed = g.gather(pos[a:b], owner[a:b])
                read += len(pos[a:b])
                rest, a = pos[b:], b
                new = _first(ed.eid[~seen[ed.eid]])
                if count + len(new) > cap:
                    i = int(np.flatnonzero(ed.eid == new[cap - count])[0])
                    seen[new[: cap - count]] = True
                    visited[ed.nbr[:i]] = True
                    found.append(new[: cap - count])
                    # the scan: rows i.. of the slice, then the chunk's rest, then chunks
                    eds = [Edges(*(x[i : i + scan] for x in vars(ed).values()))]
                    exact = len(eds[0].eid) < scan
                    left = scan - len(eds[0].eid)
                    more = [rest] if len(ed.eid) <= i + scan else []
                    more += [g.positions(c)[0] for c in chunks[ci + 1 :]] if exact else []
                    for m in more:
                        if left <= 0:
                            exact = exact and not len(m)
                            continue
                        eds.append(g.gather(m[:left], np.zeros(min(left, len(m)), np.int64)))
                        exact = exact and len(m) <= left
                        left -= min(left, len(m))
                    rels = np.concatenate([e.rel[~seen[e.eid]] for e in eds])
                    nbrs = [e.nbr[~seen[e.eid] & ~visited[e.nbr]] for e in eds]
                    return Expansion(
                        np.concatenate(found),
                        True,
                        f"max_triples={cap} reached",
                        level + 1,
                        level_edges - read + len(new) - (cap - count),
                        len(np.unique(rels)),
                        len(np.unique(np.concatenate(nbrs))),
                        exact,
                    )
                seen[new] = True
                count += len(new)
                found.append(new)
                nv = _first(ed.nbr[~visited[ed.nbr]])
                visited[nv] = True
                nxt.append(nv)
        frontier = np.concatenate(nxt) if nxt else np.zeros(0, dtype=np.int64)
        if not len(frontier):
            break
    return Expansion(np.concatenate(found) if found else np.zeros(0, dtype=np.int64), False)


def _random_store(path: Path, seed: int, legacy: bool = False) -> StoreKG:
    """Hubs, dense clusters (edges inside one BFS level, in both row orders), self-loops,
    repeated triples and a noise relation. legacy: node ids in first-appearance order, as
    stores built before kg/store/build._key_order have them."""
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(120)]
    rels = ["r0", "r1", "r2", "common.topic.alias"]
    rows = []
    for _ in range(900):
        h = rng.choice(nodes[:8]) if rng.random() < 0.3 else rng.choice(nodes)
        t = rng.choice(nodes[:5]) if rng.random() < 0.2 else rng.choice(nodes)
        rows.append(f"{h}\t{rng.choice(rels)}\t{t}\n")
    rows += [f"n{i}\tr1\tn{i}\n" for i in range(0, 120, 9)]  # self-loops
    rows += rows[:40]  # repeated triples
    (path / "g.tsv").write_text("".join(rows))
    with legacy_layout(legacy):
        build_store([Source(path / "g.tsv")], path / "store")
    return StoreKG(path / "store")


def legacy_layout(on: bool = True) -> contextlib.AbstractContextManager:
    """Within it, stores are built with first-appearance node ids (the layout before
    kg/store/build._key_order; its keys.rank is then a true permutation)."""
    if not on:
        return contextlib.nullcontext()
    return mock.patch.object(
        store_build, "_key_order", lambda keys, h, t: (keys, h, t, key_ranks(keys))
    )


@pytest.fixture(scope="module", params=[1, 2, "legacy"])
def store(request, tmp_path_factory) -> StoreKG:
    seed, legacy = (1, True) if request.param == "legacy" else (request.param, False)
    return _random_store(tmp_path_factory.mktemp(f"walk{request.param}"), seed, legacy)


def _same(a: Expansion, b: Expansion) -> None:
    assert a.eids.dtype == b.eids.dtype and a.eids.tolist() == b.eids.tolist()
    assert [getattr(a, f) for f in FIELDS] == [getattr(b, f) for f in FIELDS]


@pytest.mark.parametrize(
    "chunk,scan,part", [(1 << 13, 1 << 16, 1 << 12), (3, 5, 1), (16, 40, 2), (40, 7, 5)]
)
def test_expand_matches_the_plain_rule(store, monkeypatch, chunk, scan, part):
    monkeypatch.setattr(graph_mod, "CHUNK_EDGES", chunk)
    monkeypatch.setattr(graph_mod, "LEFT_OUT_SCAN", scan)
    monkeypatch.setattr(graph_mod, "PART_MIN", part)
    g = store.graph
    rng = np.random.default_rng(0)
    for noise in (np.zeros(len(g.noise), bool), g.noise):
        walker = CSRGraph(store.path, noise)
        for k in range(40):
            seeds = rng.integers(0, g.n_nodes, size=1 + k % 3)
            if k % 5 == 0:
                seeds = np.concatenate([seeds, seeds[:1]])  # a repeated seed
            for depth, cap in ((1, 4), (2, 30), (3, 120), (3, 100_000), (2, 1)):
                _same(walker.expand(seeds, depth, cap), reference_expand(walker, seeds, depth, cap))


def test_walks_on_threads_get_their_own_scratch(store):
    g = CSRGraph(store.path, store.graph.noise)
    seeds = [np.array([i, (7 * i) % g.n_nodes]) for i in range(0, g.n_nodes, 3)]
    want = [g.expand(s, 3, 50) for s in seeds]
    got: dict[int, list[Expansion]] = {}
    start = threading.Barrier(4)

    def run(t: int) -> None:
        start.wait()
        got[t] = [g.expand(s, 3, 50) for s in seeds for _ in range(3)][::3]

    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for t in range(4):
        for a, b in zip(got[t], want, strict=True):
            _same(a, b)
    pool = ScratchPool(5, 5, keep=2)
    with pool.take() as a, pool.take() as b, pool.take() as c:
        assert len({id(a), id(b), id(c)}) == 3  # never shared while held
    with pool.take() as d:
        assert d in (a, b, c)  # reused afterwards (two kept)
    assert len(pool._free) == 2


def test_stamps_wrap_around_and_failed_walks_are_dropped(store, monkeypatch):
    g = CSRGraph(store.path, store.graph.noise)
    seeds = [np.array([i]) for i in range(0, g.n_nodes, 2)]
    want = [reference_expand(g, s, 3, 60) for s in seeds]
    for _ in range(walk_mod.STAMP_MAX // len(seeds) + 2):  # past STAMP_MAX walks
        for s, w in zip(seeds, want, strict=True):
            _same(g.expand(s, 3, 60), w)
    (sc,) = g.scratch._free
    assert 1 <= sc.stamp <= walk_mod.STAMP_MAX

    def boom(*a, **k):
        raise RuntimeError("disk gone")

    monkeypatch.setattr(g, "_left_out", boom)
    monkeypatch.setenv("KGREASON_JIT", "0")  # the numpy walk (the compiled one has no hook)
    with pytest.raises(RuntimeError):
        g.expand(seeds[0], 3, 1)  # fails in the middle of a cut, PAIR marks possibly set
    assert g.scratch._free == []  # that scratch was not returned
    monkeypatch.undo()
    _same(g.expand(seeds[1], 3, 60), want[1])


@pytest.mark.parametrize("n", [0, 1, 100, 5000, 70_000])
@pytest.mark.parametrize("bound", [50, 1 << 16, 1 << 24, 1 << 31, 1 << 40])
def test_sort_edge_ids_is_np_sort(n, bound):
    ids = np.random.default_rng(n).integers(0, bound, size=n)
    got = sort_edge_ids(ids, bound)
    assert got.dtype == np.int64 and np.array_equal(got, np.sort(ids))


@pytest.mark.parametrize("bound", [3, 1000, 1 << 20, 1 << 40, 1 << 60])
def test_radix_argsort_and_unique_match_numpy(bound):
    rng = np.random.default_rng(bound % 97)
    keys = rng.integers(0, bound, size=20_000)
    keys[::7] = keys[0]  # many repeats: stability matters
    assert np.array_equal(radix_argsort(keys, bound), np.argsort(keys, kind="stable"))
    u, inv, cnt = unique_inverse_counts(keys, bound)
    nu, ninv, ncnt = np.unique(keys, return_inverse=True, return_counts=True)
    assert np.array_equal(u, nu) and np.array_equal(inv, ninv) and np.array_equal(cnt, ncnt)
    e = unique_inverse_counts(keys[:0], bound)
    assert [len(x) for x in e] == [0, 0, 0]


@pytest.mark.parametrize("chunk,scan,part", [(1 << 13, 1 << 16, 1 << 12), (3, 5, 1), (40, 7, 5)])
def test_expand_keeps_the_triples_of_its_edges(store, monkeypatch, chunk, scan, part):
    """Expansion.triples (what clustering reads instead of looking heads up) is exactly
    triples(eids), row by row, through slices, parts, cuts and noise."""
    monkeypatch.setattr(graph_mod, "CHUNK_EDGES", chunk)
    monkeypatch.setattr(graph_mod, "LEFT_OUT_SCAN", scan)
    monkeypatch.setattr(graph_mod, "PART_MIN", part)
    monkeypatch.setattr(walk_mod, "FOUND_START", 1 + part)  # Found's buffers grow, too
    rng = np.random.default_rng(1)
    for noise in (np.zeros(len(store.graph.noise), bool), store.graph.noise):
        g = CSRGraph(store.path, noise)
        for k in range(30):
            seeds = rng.integers(0, g.n_nodes, size=1 + k % 3)
            for depth, cap in ((1, 4), (2, 30), (3, 120), (3, 100_000), (2, 1), (2, 0)):
                res = g.expand(seeds, depth, cap)
                assert res.triples is not None
                for got, want in zip(res.triples, g.triples(res.eids), strict=True):
                    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("seed", range(6))
def test_slice_owner_is_the_repeat_of_the_owners(seed):
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, 5, size=rng.integers(1, 12))
    lens[rng.random(len(lens)) < 0.3] = 0  # empty segments, also at either end
    node = rng.integers(0, 1000, size=len(lens))
    full = np.repeat(node, lens)
    ends = np.cumsum(lens)
    for a in range(len(full) + 1):
        for b in range(a, len(full) + 2):
            got = slice_owner(ends, node, a, min(b, len(full)))
            assert got.tolist() == full[a:b].tolist()
