"""Segment expansion (pog/arrays/segments.py) against a plain per-edge reference: the reached set
of every (distinct set, key), with `keep` filters, overlapping sets and hubs."""

from __future__ import annotations

import numpy as np
import pytest
from tests.pog.synth_graphs import synth_graphs

from kgreason.pog.arrays.segments import expand_segments, key_rows, segment_hashes, segment_table


def _edges(g):
    """(node, key, neighbour) of every edge row, both directions, as a Python set."""
    out = set()
    for ptr, rel, nbr, fwd in ((g.optr, g.orel, g.odst, 1), (g.iptr, g.irel, g.isrc, 0)):
        node = np.repeat(np.arange(g.n), np.diff(ptr))
        key = g.rel_rank[rel] * 2 + fwd
        out |= set(zip(node.tolist(), key.tolist(), nbr.tolist(), strict=True))
    return out


def _reference(edges, sets, keep):
    want: dict[tuple[int, int], set[int]] = {}
    for u, members in enumerate(sets):
        ms = set(members)
        for m, key, v in edges:
            if m in ms and keep[v]:
                want.setdefault((u, key), set()).add(v)
    return {k: sorted(v) for k, v in want.items()}


@pytest.mark.parametrize("drop", [0.0, "hub", 0.3, 0.97])
def test_expand_segments_matches_per_edge_union(drop):
    g, _, _, _ = synth_graphs(6_000, seed=4)
    hv = np.random.default_rng(0).integers(0, 2**63, g.n, dtype=np.uint64)
    rng = np.random.default_rng(7)
    hubs = np.argsort(-np.bincount(np.repeat(np.arange(g.n), np.diff(g.optr)), minlength=g.n))
    if drop == "hub":  # a free search drops only its start: filtered after deduplicating
        keep = np.ones(g.n, dtype=bool)
        keep[g.isrc[0]] = False
    else:
        keep = rng.random(g.n) >= drop
    sets = [sorted(set(rng.choice(g.n, size=k, replace=False).tolist())) for k in (1, 3, 40, 300)]
    sets += [sorted(hubs[:5].tolist()), sorted(hubs[:5].tolist()), []]  # equal sets, empty
    members = np.array([m for s in sets for m in s], dtype=np.int64)
    owner = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    pool = segment_table(g).pool
    bad_cum = np.concatenate([[0], np.cumsum(~keep[pool])])
    e = expand_segments(g, members, owner, keep, hv, bad_cum)
    k2 = 2 * max(len(g.rel_names), 1)
    got = {}
    for code, a, ln, h in zip(e.code.tolist(), e.a, e.ln, e.h, strict=True):
        s = e.pool[a : a + ln]
        assert np.uint64(hv[s].sum(dtype=np.uint64)) == h  # the set hash
        got[divmod(code, k2)] = s.tolist()
    assert e.code.tolist() == sorted(e.code.tolist())
    assert got == _reference(_edges(g), sets, keep)
    assert e.shared == len(pool) and len(got)


def test_segment_hashes_follow_the_node_hash():
    """The cached prefix sums belong to one node hash: another hash gets its own sums (a
    search with a different hash must not read set hashes of the first)."""
    g, _, _, _ = synth_graphs(6_000, seed=6)
    rng = np.random.default_rng(3)
    hv1 = rng.integers(0, 2**63, g.n, dtype=np.uint64)
    hv2 = rng.integers(0, 2**63, g.n, dtype=np.uint64)
    pool = segment_table(g).pool
    c1 = segment_hashes(g, hv1)
    assert segment_hashes(g, hv1) is c1
    c2 = segment_hashes(g, hv2)
    assert c2[-1] == hv2[pool].sum(dtype=np.uint64)
    assert c2[-1] != c1[-1]


def test_key_rows_are_the_node_key_edges():
    """key_rows gives each (node, key) query exactly its neighbours by that key (none for a
    key the node lacks), read from the segment pool."""
    g, _, _, _ = synth_graphs(6_000, seed=7)
    edges = _edges(g)
    k2 = 2 * max(len(g.rel_names), 1)
    rng = np.random.default_rng(2)
    nodes = rng.integers(0, g.n, 400)
    codes = rng.integers(0, k2, 400)
    have = [(m, k) for m, k, _ in edges]
    pick = rng.choice(len(have), 200)  # half the queries hit a key the node has
    nodes = np.concatenate([nodes, [have[i][0] for i in pick]]).astype(np.int64)
    codes = np.concatenate([codes, [have[i][1] for i in pick]]).astype(np.int64)
    pool = segment_table(g).pool
    got: dict[int, list[int]] = {i: [] for i in range(len(nodes))}
    for m, lo, k in key_rows(g, nodes, codes):
        for i, a, c in zip(np.flatnonzero(m).tolist(), lo.tolist(), k.tolist(), strict=True):
            got[i] += pool[a : a + c].tolist()
    want = {
        i: sorted(v for mm, kk, v in edges if mm == nd and kk == cd)
        for i, (nd, cd) in enumerate(zip(nodes.tolist(), codes.tolist(), strict=True))
    }
    assert got == want
    assert any(want.values()) and not all(want.values())
