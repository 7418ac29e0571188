"""The array kernels behind clustering and reduction on local stores (pog/arrays/csr.py,
pog/arrays/build.py) against plain references: numpy's sort/unique, a Python BFS, the
set-based dead-end pruning of reduction.py, a set-based mirror test; and from_store's two
relabelling paths (stored keys.rank, or decoded keys for older stores) against each other."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from kgreason.kg.base import Triple
from kgreason.kg.inverses import known_inverses
from kgreason.kg.loaders import Source
from kgreason.kg.store import StoreKG, build_store
from kgreason.pog.arrays.build import from_store
from kgreason.pog.arrays.csr import (
    SMALL_SORT,
    bfs,
    group_count,
    mirror_mask,
    prune_dead_ends,
    row_ptr,
    sort_codes,
    undirected_pairs,
    unique_codes,
)
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.reduction import _prune_dead_ends
from kgreason.pog.settings import PoGSettings
from kgreason.pog.subgraph import detect_subgraph_store


@pytest.mark.parametrize("size", [0, 1, 2, 100, SMALL_SORT + 7, 60_000])
@pytest.mark.parametrize("hi", [3, 70_000, 2**40, 2**62])
def test_sort_and_unique_codes_match_numpy(size, hi):
    rng = np.random.default_rng(size + hi % 97)
    codes = rng.integers(0, hi, size, dtype=np.int64)
    if size > 10:  # runs and repeats, as edge codes have
        codes[: size // 3] = np.sort(codes[: size // 3])
        codes[size // 2 :] = codes[: size - size // 2]
    assert np.array_equal(sort_codes(codes, hi), np.sort(codes))
    assert np.array_equal(unique_codes(codes, hi), np.unique(codes))


def _random_graph(seed: int, n: int, m: int):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = a != b
    a, b = a[keep], b[keep]
    a, b = np.concatenate([a, a[:20]]), np.concatenate([b, b[:20]])  # duplicate edges
    return a.astype(np.int64), b.astype(np.int64)


def _csr(src, dst, n):
    order = np.argsort(src, kind="stable")
    return row_ptr(src, n), dst[order]


@pytest.mark.parametrize("seed,edges", [(0, 500), (1, 500), (2, 3000), (3, 9000)])
def test_bfs_matches_python_bfs(seed, edges):
    """Sparse graphs stay top-down; dense ones turn bottom-up from the second level."""
    n = 300
    a, b = _random_graph(seed, n, edges)
    names = np.array([f"v{i:03d}" for i in range(n)], dtype=object)
    adj: dict[int, set[int]] = {v: set() for v in range(n)}
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        adj[x].add(y)
        adj[y].add(x)
    for u in (0, 7, 299):
        want = np.full(n, -1)
        want[u] = 0
        todo = deque([u])
        while todo:
            v = todo.popleft()
            if want[v] == 4:
                continue
            for w in adj[v]:
                if want[w] < 0:
                    want[w] = want[v] + 1
                    todo.append(w)
        rows = [_csr(a, b, n), _csr(b, a, n)]
        assert np.array_equal(bfs(n, u, 4, rows), want)
        und = ArrayClusteredGraph.from_arrays(a, np.zeros_like(a), b, names, ["r"]).undirected()
        assert np.array_equal(bfs(n, u, 4, [und]), want)


@pytest.mark.parametrize("seed", range(5))
def test_dead_end_pruning_matches_the_set_version(seed):
    n = 200
    a, b = _random_graph(seed, n, 260)  # sparse: chains and leaves to peel
    slow = ClusteredGraph.from_triples(
        Triple(f"v{x:03d}", "r", f"v{y:03d}") for x, y in zip(a.tolist(), b.tolist(), strict=True)
    )
    rng = np.random.default_rng(seed)
    keep = rng.random(n) < 0.8
    topics = np.flatnonzero(keep)[:3]
    lo, hi = undirected_pairs(a, b, n)
    assert len(lo) == len(
        {(min(x, y), max(x, y)) for x, y in zip(a.tolist(), b.tolist(), strict=True)}
    )
    protected = np.zeros(n, dtype=bool)
    protected[topics] = True
    got = prune_dead_ends(keep, protected, lo, hi)
    want = _prune_dead_ends(
        slow, {f"v{i:03d}" for i in np.flatnonzero(keep)}, {f"v{i:03d}" for i in topics}
    )
    assert {f"v{i:03d}" for i in np.flatnonzero(got)} == want


def test_mirror_mask_and_group_count():
    rng = np.random.default_rng(1)
    n, m = 40, 4
    h, r, t = rng.integers(0, n, 300), rng.integers(0, m, 300), rng.integers(0, n, 300)
    inverse = np.array([-1, 0, -1, 2])  # relation 1 is the inverse of 0, 3 of 2
    got = mirror_mask(h, r, t, inverse, n)
    edges = set(edges_list(h, r, t))
    want = [inverse[y] >= 0 and (z, int(inverse[y]), x) in edges for x, y, z in edges_list(h, r, t)]
    assert got.tolist() == want
    order = np.lexsort((r, h))
    assert group_count(h[order], r[order]) == len(set(zip(h.tolist(), r.tolist(), strict=True)))
    assert group_count(h[:0], r[:0]) == 0


def edges_list(h, r, t):
    return list(zip(h.tolist(), r.tolist(), t.tolist(), strict=True))


def test_restricted_inbound_rows_equal_rebuilt_ones():
    rng = np.random.default_rng(2)
    names = np.array([f"e{i:04d}" for i in range(500)], dtype=object)
    h, r, t = rng.integers(0, 500, 3000), rng.integers(0, 7, 3000), rng.integers(0, 500, 3000)
    g = ArrayClusteredGraph.from_arrays(h, r, t, names, [f"r{i}" for i in range(7)])
    keep = rng.random(g.n) < 0.6
    sub = g.restrict_mask(keep)
    fresh = ArrayClusteredGraph(sub.h, sub.r, sub.t, g.names, g.rel_names, g.index, keep)
    for name in ("iptr", "irel", "isrc", "idst", "optr", "orel", "odst", "degree"):
        assert np.array_equal(getattr(sub, name), getattr(fresh, name)), name
    slow = ClusteredGraph.from_triples(sub.triples())
    assert sub.clustered_edge_count() == slow.clustered_edge_count()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    rng = np.random.default_rng(3)
    d = tmp_path_factory.mktemp("csr")
    # ids whose numeric order differs from their string order, a hub, mirrored inverses
    rows = [
        (f"n{int(a)}", f"p{int(p)}", f"n{int(b)}")
        for a, p, b in rng.integers(0, 400, (1500, 3)) % [400, 5, 400]
    ]
    rows += [("hub", "p0", f"n{i}") for i in range(300)]
    rows += [(t, "p1_inverse", h) for h, p, t in rows[:200] if p == "p1"]
    rows += [("n5", "p2", "n5")]  # a self-loop
    (d / "kg.tsv").write_text("".join("\t".join(x) + "\n" for x in rows))
    build_store([Source(d / "kg.tsv")], d / "store")
    return StoreKG(d / "store")


@pytest.mark.parametrize("topics", [["hub"], ["n5", "n17"], ["hub", "nowhere"], ["nowhere"]])
def test_from_store_without_keys_rank_matches(store, topics, monkeypatch):
    assert store.index.key_rank is not None
    sub, eids = detect_subgraph_store(store, tuple(topics), PoGSettings(max_subgraph_triples=900))
    inv = known_inverses(store)
    a = from_store(store, eids, topics, inv)
    monkeypatch.setattr(store.index, "key_rank", None)
    b = from_store(store, eids, topics, inv)
    for name in ("h", "r", "t", "optr", "iptr", "irel", "isrc", "present"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.names.tolist() == b.names.tolist() == sorted(a.names.tolist())
    probe = [*a.names.tolist()[:50], "nowhere", "n399", "hub"]
    assert a.index.many(probe).tolist() == b.index.many(probe).tolist()
    assert a.extra == b.extra and a.isolated == b.isolated
    # the generic path over the same triples agrees on the clustered graph
    slow = ClusteredGraph.from_triples(
        {x for x in sub.triples if x.head != x.tail} - _folded(sub.triples, inv), isolated=topics
    )
    assert a.triples() == slow.triples()
    assert a.clustered_edge_count() == slow.clustered_edge_count()


def _folded(triples, inv):
    from kgreason.kg.inverses import fold_inverse_triples

    return set(triples) - set(fold_inverse_triples(triples, inv))


def test_empty_subgraph(store):
    g = from_store(store, np.array([], dtype=np.int64), ["nowhere"], {})
    assert g.n == 0 and g.triple_count() == 0 and g.clustered_edge_count() == 0
    assert g.isolated == frozenset({"nowhere"})
