"""The graph-building kernels (kg/store/kernels/walk.py, reduce.py): each compiled loop gives
exactly its numpy form's output and a plain reference's, on randomised inputs and edge
cases (empty, one node, no edges, depth 0, ids near the top of their dtype)."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from tests.kg.test_store_walk import FIELDS, _random_store, reference_expand

from kgreason.kg.store import graph as graph_mod
from kgreason.kg.store.graph import CSRGraph
from kgreason.kg.store.kernels import build as kbuild
from kgreason.kg.store.kernels import walk as kwalk
from kgreason.pog.arrays import csr as fastcsr
from kgreason.pog.arrays.kernels import cluster as kcluster
from kgreason.pog.arrays.kernels import reduce as kred

numba = pytest.importorskip("numba", reason="numba not installed: the numpy forms are tested")


def _csr(n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a grouped by a (stable), as (ptr, neighbour)."""
    o = np.argsort(a, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(a, minlength=n), out=ptr[1:])
    return ptr, b[o].astype(np.int64)


def _graph(rng: np.random.Generator, n: int, m: int):
    """Random directed edges without self-loops (repeats allowed), as the out- and in-CSRs."""
    h, t = rng.integers(0, n, m), rng.integers(0, n, m)
    ok = h != t
    h, t = h[ok], t[ok]
    return h, t, [_csr(n, h, t), _csr(n, t, h)]


def _plain_bfs(n, u, depth, h, t) -> list[int]:
    nb = [set() for _ in range(n)]
    for a, b in zip(h.tolist(), t.tolist(), strict=True):
        nb[a].add(b)
        nb[b].add(a)
    dist = [-1] * n
    dist[u] = 0
    q = deque([u])
    while q:
        x = q.popleft()
        if dist[x] == depth:
            continue
        for y in nb[x]:
            if dist[y] < 0:
                dist[y] = dist[x] + 1
                q.append(y)
    return dist


def _plain_prune(keep, protected, h, t) -> list[bool]:
    alive = set(np.flatnonzero(keep).tolist())
    while True:
        nb: dict[int, set[int]] = {x: set() for x in alive}
        for a, b in zip(h.tolist(), t.tolist(), strict=True):
            if a in alive and b in alive:
                nb[a].add(b)
                nb[b].add(a)
        drop = {x for x in alive if not protected[x] and len(nb[x]) < 2}
        if not drop:
            return [x in alive for x in range(len(keep))]
        alive -= drop


@pytest.mark.parametrize("seed", range(8))
def test_bfs_compiled_equals_numpy_and_plain(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    h, t, rows = _graph(rng, n, int(rng.integers(0, 4 * n)))
    for depth in (0, 1, 2, 6):
        u = int(rng.integers(0, n))
        want = _plain_bfs(n, u, depth, h, t)
        monkeypatch.setenv("KGREASON_JIT", "0")
        assert fastcsr.bfs(n, u, depth, rows).tolist() == want
        for dtype in (np.int64, np.int8):
            got = kred.bfs_compiled(n, u, depth, rows, jit=True, dtype=dtype)
            assert got is not None and got.dtype == dtype and got.tolist() == want
        monkeypatch.setenv("KGREASON_JIT", "1")
        got = fastcsr.bfs(n, u, depth, rows)  # the dispatch takes the compiled form
        assert got.dtype == np.int64 and got.tolist() == want


def test_bfs_one_node_and_bottom_up_levels():
    ptr, nbr = np.zeros(2, np.int64), np.zeros(0, np.int64)
    assert kred.bfs_compiled(1, 0, 5, [(ptr, nbr)], jit=True).tolist() == [0]
    # a star: the second level is found bottom-up (the frontier holds every slot)
    n = 200
    h = np.zeros(n - 1, np.int64)
    t = np.arange(1, n, dtype=np.int64)
    rows = [_csr(n, h, t), _csr(n, t, h)]
    want = _plain_bfs(n, 5, 3, h, t)
    assert kred.bfs_compiled(n, 5, 3, rows, jit=True).tolist() == want
    assert kred.bfs_compiled(n, 5, 64, rows, jit=True, dtype=np.int8) is None  # too deep


@pytest.mark.parametrize("seed", range(8))
def test_prune_and_restrict_compiled_equal_numpy_and_plain(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 200))
    h, t, rows = _graph(rng, n, int(rng.integers(0, 3 * n)))
    keep = rng.random(n) < 0.8
    protected = np.zeros(n, bool)
    protected[rng.integers(0, n, 2)] = True
    keep |= protected
    want = _plain_prune(keep, protected, h, t)
    e = keep[h] & keep[t]
    a, b = fastcsr.undirected_pairs(h[e], t[e], n)
    assert fastcsr.prune_dead_ends(keep, protected, a, b).tolist() == want
    got = kred.prune_compiled(keep, protected, rows, jit=True)
    assert got is not None and got.tolist() == want
    # restrict: the rows with both ends kept, in order, and their row pointer
    r = rng.integers(0, 7, len(h)).astype(np.int64)
    o = np.lexsort((t, r, h))
    hs, rs, ts = h[o].astype(np.int64), r[o], t[o].astype(np.int64)
    ((h2, r2, t2, ptr),) = kred.restrict_compiled(got, [(hs, rs, ts)], n, jit=True)
    m = got[hs] & got[ts]
    assert [h2.tolist(), r2.tolist(), t2.tolist()] == [
        hs[m].tolist(),
        rs[m].tolist(),
        ts[m].tolist(),
    ]
    assert ptr.tolist() == fastcsr.row_ptr(hs[m], n).tolist()


def test_restrict_and_prune_of_nothing():
    z = np.zeros(0, np.int64)
    ((h, r, t, ptr),) = kred.restrict_compiled(np.ones(3, bool), [(z, z, z)], 3, jit=True)
    assert len(h) == len(r) == len(t) == 0 and ptr.tolist() == [0, 0, 0, 0]
    ptr0 = np.zeros(4, np.int64)
    got = kred.prune_compiled(np.ones(3, bool), np.array([1, 0, 0], bool), [(ptr0, z)], jit=True)
    assert got.tolist() == [True, False, False]


def test_ids_past_int32_fall_back_to_numpy():
    """The loops queue and stamp nodes in int32: a graph of 2**31 nodes or more takes the
    numpy form (None here), never a wrapped id. Rows at the int32 top still work."""
    ptr, nbr = np.zeros(3, np.int64), np.zeros(0, np.int64)
    huge = 1 << 31
    assert kred.bfs_compiled(huge, 0, 3, [(ptr, nbr)], jit=True) is None
    lone = kred.prune_compiled(np.ones(2, bool), np.zeros(2, bool), [(ptr, nbr)], jit=True)
    assert lone.tolist() == [False, False]
    top = np.iinfo(np.int32).max
    h = np.array([0, 1], np.int64)
    t = np.array([1, 2], np.int64)
    rows = [_csr(3, h, t), _csr(3, t, h)]
    assert kred.bfs_compiled(3, 0, top, rows, jit=True).tolist() == [0, 1, 2]


# --- the subgraph walk ------------------------------------------------------------------


@pytest.fixture(scope="module", params=[1, 2, "legacy"])
def store(request, tmp_path_factory):
    """Random stores; "legacy": seed 1 with first-appearance node ids (the key-rank loop)."""
    seed, legacy = (1, True) if request.param == "legacy" else (request.param, False)
    return _random_store(tmp_path_factory.mktemp(f"kwalk{request.param}"), seed, legacy)


def _walks(g: CSRGraph, monkeypatch, seeds, depth, cap):
    out = {}
    for mode in ("0", "1"):
        monkeypatch.setenv("KGREASON_JIT", mode)
        out[mode] = g.expand(seeds, depth, cap)
    return out["0"], out["1"]


@pytest.mark.parametrize("chunk,scan", [(1 << 13, 1 << 16), (3, 5), (16, 40), (40, 7)])
def test_walk_compiled_equals_numpy_and_plain(store, monkeypatch, chunk, scan):
    monkeypatch.setattr(graph_mod, "CHUNK_EDGES", chunk)
    monkeypatch.setattr(graph_mod, "LEFT_OUT_SCAN", scan)
    rng = np.random.default_rng(chunk)
    used = 0
    for noise in (np.zeros(len(store.graph.noise), bool), store.graph.noise):
        g = CSRGraph(store.path, noise)
        for k in range(30):
            seeds = rng.integers(0, g.n_nodes, size=1 + k % 3)
            if k % 5 == 0:
                seeds = np.concatenate([seeds, seeds[:1]])
            for depth, cap in ((1, 4), (2, 30), (3, 120), (3, 100_000), (2, 1), (2, 0), (0, 9)):
                a, b = _walks(g, monkeypatch, seeds, depth, cap)
                ref = reference_expand(g, seeds, depth, cap)
                for x in (a, b):
                    assert x.eids.tolist() == ref.eids.tolist()
                    assert [getattr(x, f) for f in FIELDS] == [getattr(ref, f) for f in FIELDS]
                assert all(
                    u.dtype == v.dtype and u.tolist() == v.tolist()
                    for u, v in zip(a.rows, b.rows, strict=True)
                )
                used += 1
    assert used


def test_walk_kernel_is_used_and_leaves_its_bitmaps_zeroed(store, monkeypatch):
    """The compiled walk runs on these stores (int32 columns), marks in the scratch's
    bitmaps and zeroes them before it returns, cut or not, so the next walk starts clean;
    a walk that reuses the scratch finds what a fresh one finds."""
    g = store.graph
    monkeypatch.setenv("KGREASON_JIT", "1")
    calls = []
    real = kwalk.walk_compiled
    monkeypatch.setattr(kwalk, "walk_compiled", lambda *a, **k: calls.append(1) or real(*a, **k))
    rng = np.random.default_rng(9)
    for cap in (3, 50, 100_000):
        seeds = rng.integers(0, g.n_nodes, 2)
        with g.scratch.take() as sc:
            got = g._expand(sc, seeds, 3, cap)
            assert not any(b.any() for b in sc.walk_bits())
            again = g._expand(sc, seeds, 3, cap)  # (the same scratch, not begun again)
        assert again.eids.tolist() == got.eids.tolist() and again.truncated == got.truncated
        assert got.truncated == (cap < 100_000)
    assert calls
    monkeypatch.setenv("KGREASON_JIT", "0")
    assert kwalk.walk_compiled(g, None, seeds, 3, 50, 8, None) is None  # switched off


def test_walk_of_no_seeds(store, monkeypatch):
    a, b = _walks(store.graph, monkeypatch, np.zeros(0, np.int64), 3, 10)
    assert len(a.eids) == len(b.eids) == 0 and not a.truncated and not b.truncated


# --- clustering: the radix sort and the fused relabel + CSR loop ----------------------


@pytest.mark.parametrize("seed", range(6))
def test_radix_compiled_equals_np_sort(seed):
    rng = np.random.default_rng(300 + seed)
    for width in (1, 7, 16, 17, 33, 46, 62):
        n = int(rng.integers(0, 3000))
        v = rng.integers(0, 1 << width, n, dtype=np.int64)
        got = kbuild.radix_compiled(v, width, jit=True)
        assert got is not None and got.tolist() == np.sort(v).tolist()
        sb = min(width, 9)  # values already in order of their low bits
        w = np.sort(v & ((1 << sb) - 1)) | (v >> sb << sb)
        assert kbuild.radix_compiled(w, width, sb, jit=True).tolist() == np.sort(w).tolist()
    same = np.full(100, 5, dtype=np.int64)  # every digit shared: all passes skipped
    got = kbuild.radix_compiled(same, 3, jit=True)
    assert got.tolist() == same.tolist() and got is not same


def _graph_arrays(g):
    return [
        getattr(g, x).tolist()
        for x in ("h", "r", "t", "optr", "idst", "irel", "isrc", "iptr", "present")
    ]


@pytest.mark.parametrize("cap", [1, 40, 300, 100_000])
def test_cluster_compiled_equals_numpy_and_plain(store, monkeypatch, cap):
    """from_store through the fused loop builds the numpy path's graph, array by array,
    and its triples are the store subgraph's, folded, without self-loops."""
    from kgreason.kg.inverses import fold_inverse_triples
    from kgreason.pog.arrays import build as fastbuild

    kg = store
    rng = np.random.default_rng(cap)
    used = []
    real = kcluster.cluster_compiled

    ordered = kg.index.key_ordered
    assert ordered == bool((kg.index.key_rank == np.arange(kg.graph.n_nodes)).all())

    def spy(*a, **k):
        got = real(*a, **k)
        used.append(got is not None)
        assert (a[4] is None) == ordered  # the key-ordered loop exactly for ordered stores
        return got

    monkeypatch.setattr(fastbuild, "cluster_compiled", spy)
    inverse = {"r2": "r0"}
    for _ in range(6):
        seeds = rng.integers(0, kg.graph.n_nodes, 2)
        res = kg.graph.expand(seeds, 3, cap)
        topics = kg.index.keys.many(seeds)
        graphs = {}
        for mode in ("0", "1"):
            monkeypatch.setenv("KGREASON_JIT", mode)
            graphs[mode] = fastbuild.from_store(kg, res.eids, topics, inverse, rows=res.rows)
        a, b = graphs["0"], graphs["1"]
        assert _graph_arrays(a) == _graph_arrays(b)
        assert a.names[np.arange(a.n)].tolist() == b.names[np.arange(b.n)].tolist()
        assert [a.index.get(x) for x in topics] == [b.index.get(x) for x in topics]
        want = fold_inverse_triples(kg.triples_of(res.eids), inverse)
        assert b.triples() == {x for x in want if x.head != x.tail}
        hs, rs, ts = b.h, b.r, b.t
        codes = list(zip(hs.tolist(), rs.tolist(), ts.tolist(), strict=True))
        assert codes == sorted(set(codes)) and all(x != z for x, _, z in codes)
        inn = list(zip(b.idst.tolist(), b.irel.tolist(), b.isrc.tolist(), strict=True))
        assert inn == sorted((z, y, x) for x, y, z in codes)
    assert any(used) and not all(used)  # compiled with KGREASON_JIT=1 only


def _rows(rng: np.random.Generator, n: int, k: int, n_rel: int):
    """Walk-like rows: reading nodes in runs, neighbours anywhere (ids at word edges and in
    the last word included), repeats, self-loops, in-rows."""
    own = np.repeat(rng.integers(0, n, k // 4 + 1), 4)[:k]
    nbr = rng.integers(0, n, k)
    nbr[: k // 10] = rng.choice([0, 63, 64, 127, 128, n - 1], k // 10)
    nbr[k // 10 : k // 5] = own[k // 10 : k // 5]  # self-loops
    rel = rng.integers(0, n_rel, k).astype(np.int32)
    rel[-k // 10 :], nbr[-k // 10 :], own[-k // 10 :] = (
        rel[: k // 10],
        nbr[: k // 10],
        own[: k // 10],
    )
    inn = rng.random(k) < 0.4
    return own.astype(np.int64), nbr.astype(np.int64), rel, inn


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("n,k,n_rel", [(130, 50, 3), (1000, 3000, 17), (5000, 40_000, 300)])
def test_cluster_ordered_equals_key_rank_loop(n, k, n_rel, threads, monkeypatch):
    """A store whose node ids are the key ranks (kg/store/build._key_order) gets, from the
    key-ordered loop, exactly the arrays the key-rank loop makes from the same rows with
    first-appearance ids, on one thread and with its two CSRs made on two threads at once
    (_csr_half); all leave the node bitmap zeroed."""
    from kgreason.kg.store.walk import WalkScratch

    monkeypatch.setenv("KGREASON_JIT_THREADS", threads)
    monkeypatch.setattr(kcluster, "PARALLEL_ROWS", 0)
    halves = []
    real_half = kcluster._ordered_on_threads

    def spy(*a):
        halves.append(1)
        return real_half(*a)

    monkeypatch.setattr(kcluster, "_ordered_on_threads", spy)
    rng = np.random.default_rng(n)
    key_rank = rng.permutation(n).astype(np.int32)
    own, nbr, rel, inn = _rows(rng, n, k, n_rel)
    sc = WalkScratch(n, 1)
    sc.begin()
    want = kcluster.cluster_compiled(own, nbr, rel, inn, key_rank, sc, n_rel, jit=True)
    got = kcluster.cluster_compiled(
        key_rank[own].astype(np.int64),
        key_rank[nbr].astype(np.int64),
        rel,
        inn,
        None,
        sc,
        n_rel,
        jit=True,
    )
    assert want is not None and got is not None
    assert [x.tolist() for x in got] == [x.tolist() for x in want]
    assert not sc.walk_bits()[1].any()
    ends = np.unique(key_rank[np.concatenate([own, nbr])])
    assert got[8].tolist() == ends.tolist()  # the local ids' store ids, in key order
    h, t = got[0], got[2]
    assert len(h) and (h != t).all()
    assert len(halves) == (threads == "2")  # the threaded form ran exactly with two threads


def test_both_layouts_cluster_alike(tmp_path, monkeypatch, caplog):
    """The same triples built in both layouts give the same clustered graph of an uncut
    subgraph, array by array (local ids follow key order in both); an old-layout store
    says once that rebuilding it makes clustering faster."""
    from tests.kg.test_store_walk import _random_store

    from kgreason.pog.arrays import build as fastbuild

    monkeypatch.setenv("KGREASON_JIT", "1")
    caplog.set_level("INFO", logger="kgreason.pog.arrays.build")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    new, old = _random_store(tmp_path / "a", 3), _random_store(tmp_path / "b", 3, legacy=True)
    assert new.index.key_ordered
    assert not old.index.key_ordered
    for topic in ("n0", "n7", "n55"):
        graphs = []
        for kg in (new, old):
            seeds = kg.index.lookup([topic])
            res = kg.graph.expand(seeds, 3, 100_000)
            assert not res.truncated
            graphs.append(fastbuild.from_store(kg, res.eids, [topic], {}, rows=res.rows))
        a, b = graphs
        assert _graph_arrays(a) == _graph_arrays(b)
        assert a.names[np.arange(a.n)].tolist() == b.names[np.arange(b.n)].tolist()
    hints = [r for r in caplog.records if "kgreason kg build --force" in r.getMessage()]
    assert len(hints) == 1 and str(old.path) in hints[0].getMessage()


def test_is_identity_chunks():
    from kgreason.kg.store.names import is_identity

    x = np.arange(10, dtype=np.int32)
    assert is_identity(x, chunk=3) and is_identity(x[:0], chunk=3)
    x[7] = 8
    assert not is_identity(x, chunk=3)
