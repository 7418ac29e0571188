"""Kernels added for issue 15's subgraph and clustering stages, against plain references:
radix_sort (LSD, digit skipping), format.ranges, WalkScratch.buffer,
Found, fastcsr.pack/unpack, and fold_inverse_arrays' suffix table (name_pairs)."""

from __future__ import annotations

import numpy as np
import pytest

from kgreason.kg.store.format import ranges
from kgreason.kg.store.walk import Found, WalkScratch, radix_sort
from kgreason.pog.arrays.build import fold_inverse_arrays, suffix_bases
from kgreason.pog.arrays.csr import pack, unpack


@pytest.mark.parametrize("n", [0, 1, 2, 4095, 4096, 20_000])
@pytest.mark.parametrize(
    "bound", [1, 2, 255, 256, 1 << 16, (1 << 16) + 1, 1 << 31, 1 << 47, 1 << 62]
)
def test_radix_sort_is_np_sort(n, bound):
    rng = np.random.default_rng(n + bound % 1009)
    x = rng.integers(0, bound, size=n)
    if n > 3:
        x[:3] = [0, bound - 1, bound - 1]  # the dtype limits of the range
    got = radix_sort(x, bound)
    assert got.dtype == np.int64 and got.tolist() == np.sort(x).tolist()


@pytest.mark.parametrize("low", [1, 7, 16, 18, 20])
def test_radix_sort_skips_digits_already_in_order(low):
    """Codes (high, low) that come ordered by their low bits sort fully when only the bits
    from `low` up are sorted (what the in-edge CSR relies on)."""
    rng = np.random.default_rng(low)
    lo = np.sort(rng.integers(0, 1 << low, size=30_000))
    hi = rng.integers(0, 1 << 20, size=30_000)
    codes = (hi << low) | lo
    assert radix_sort(codes, 1 << (low + 20), sorted_bits=low).tolist() == np.sort(codes).tolist()


@pytest.mark.parametrize("seed", range(8))
def test_ranges_are_the_concatenated_aranges(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(0, 30))
    counts = rng.integers(0, 6, size=k)
    counts[rng.random(k) < 0.3] = 0  # empty segments anywhere, also first and last
    starts = rng.integers(0, 10**9, size=k)
    want = [
        v for s, c in zip(starts.tolist(), counts.tolist(), strict=True) for v in range(s, s + c)
    ]
    assert ranges(starts, counts).tolist() == want
    buf = np.full(len(want) + 5, -7, dtype=np.int64)  # into a longer buffer's prefix
    got = ranges(starts, counts, buf[: len(want)])
    assert got.tolist() == want and buf[len(want) :].tolist() == [-7] * 5


def test_scratch_buffers_are_kept_per_name_and_dtype_and_grow():
    sc = WalkScratch(4, 4)
    a = sc.buffer("x", 10, np.int64)
    a[:] = 5
    assert sc.buffer("x", 8, np.int64).base is a.base  # reused, not reallocated
    assert sc.buffer("x", 3, np.int32).dtype == np.int32  # another dtype: its own
    b = sc.buffer("x", 50, np.int64)
    assert len(b) == 50 and sc.buffer("x", 50, np.int64).base is b.base


def test_scratch_does_not_keep_huge_buffers(monkeypatch):
    from kgreason.kg.store import walk

    monkeypatch.setattr(walk, "BUFFER_KEEP", 800)  # bytes: 100 int64, 800 bool
    sc = WalkScratch(4, 4)
    a, b = sc.buffer("x", 101, np.int64), sc.buffer("x", 101, np.int64)
    assert len(a) == len(b) == 101 and not np.shares_memory(a, b) and not sc._bufs
    assert sc.buffer("y", 800, bool).base is sc.buffer("y", 800, bool).base


@pytest.mark.parametrize("start", [1, 2, 100])
def test_found_appends_in_order(monkeypatch, start):
    from kgreason.kg.store import walk

    monkeypatch.setattr(walk, "FOUND_START", start)  # growth by doubling past it
    f = Found(10, np.dtype(np.int32))
    for part in ([3, 1], [], [9, 9, 2]):
        own, nbr, rel, inn = f.claim(np.array(part, dtype=np.int64))
        own[:], nbr[:], rel[:] = [x + 1 for x in part], [x + 2 for x in part], part
        inn[:] = [x % 2 == 1 for x in part]
    assert f.eids[: f.count].tolist() == [3, 1, 9, 9, 2]
    own, nbr, rel, inn = f.rows()
    assert [own.tolist(), nbr.tolist(), rel.tolist()] == [
        [4, 2, 10, 10, 3],
        [5, 3, 11, 11, 4],
        [3, 1, 9, 9, 2],
    ]
    assert inn.tolist() == [True, True, True, True, False]


@pytest.mark.parametrize("widths", [(1, 1, 1), (18, 11, 18), (30, 2, 30), (20, 22, 20)])
def test_pack_unpack_roundtrip_and_order(widths):
    rng = np.random.default_rng(sum(widths))
    fields = [rng.integers(0, 1 << w, size=2000) for w in widths]
    fields[0][:2] = [0, (1 << widths[0]) - 1]
    f0 = fields[0].copy()
    codes = pack(fields, widths)
    assert np.array_equal(fields[0], f0)  # the inputs are not modified in place
    assert all(np.array_equal(a, b) for a, b in zip(unpack(codes, widths), fields, strict=True))
    order = np.lexsort(fields[::-1])
    assert np.array_equal(np.argsort(codes, kind="stable"), order)


SUFFIXES = ["", "_inverse", "_inv", "-inverse", "_reverse", "_reversed", "_inv_inverse"]


@pytest.mark.parametrize("seed", range(12))
def test_fold_suffix_table_is_name_pairs(seed):
    """fold_inverse_arrays with the per-store suffix table keeps exactly the edges the
    name_pairs path keeps: random names with every suffix (and stacked ones), relations
    absent from the subgraph, and inverse_of pairs that override, point at absent or
    unknown relations."""
    rng = np.random.default_rng(seed)
    stems = [f"r{i}" for i in range(6)]
    names = sorted({s + rng.choice(SUFFIXES) for s in stems for _ in range(3)})
    rng.shuffle(names)
    m = len(names)
    inverse_of = {str(rng.choice(names)): str(rng.choice(names)) for _ in range(2)}
    inverse_of["nowhere"] = str(names[0])
    inverse_of[str(names[-1])] = "missing"
    n, e = 12, 400
    h, t = rng.integers(0, n, e), rng.integers(0, n, e)
    r = rng.integers(0, max(1, m - 2), e)  # the last relations are absent
    h, t = np.concatenate([h, t[:150]]), np.concatenate([t, h[:150]])  # mirrors
    r = np.concatenate([r, rng.integers(0, m, 150)])
    want = fold_inverse_arrays(h, r, t, names, inverse_of)
    got = fold_inverse_arrays(h, r, t, names, inverse_of, bases=suffix_bases(names))
    assert got.tolist() == want.tolist()


def test_suffix_table_declines_repeated_names():
    assert suffix_bases(["a", "a_inv", "a"]) is None


@pytest.mark.parametrize("disorder", [0.0, 0.01, 0.2, 0.5, 1.0])
def test_sort_codes_on_every_degree_of_presortedness(disorder):
    """sort_codes picks timsort or the radix sort by how sorted the input is: both np.sort."""
    from kgreason.pog.arrays.csr import sort_codes

    rng = np.random.default_rng(int(disorder * 100))
    codes = np.sort(rng.integers(0, 1 << 37, size=50_000))
    swap = rng.random(len(codes)) < disorder
    codes[swap] = rng.permutation(codes[swap])
    assert sort_codes(codes, 1 << 37).tolist() == np.sort(codes).tolist()


@pytest.mark.parametrize("n", [0, 1, 2, 1000])
def test_rank_nodes_inverts_key_rank(n):
    from kgreason.pog.arrays.build import rank_nodes

    key_rank = np.random.default_rng(n).permutation(n).astype(np.int32)
    inv = rank_nodes(key_rank)
    assert inv.tolist() == np.argsort(key_rank).tolist()
    assert all(key_rank[inv[k]] == k for k in range(n))


def test_grouped_walk_keeps_the_triples_of_its_edges(tmp_path):
    """expand_grouped's Expansion.triples is triples(eids), row by row (cut or not)."""
    from kgreason.kg.loaders import Source
    from kgreason.kg.store import StoreKG, build_store

    rng = np.random.default_rng(3)
    rows = [
        f"n{rng.integers(0, 60)}\tr{rng.integers(0, 5)}\tn{rng.integers(0, 60)}\n"
        for _ in range(700)
    ]
    rows += [f"hub\tr{k % 3}\tn{k % 60}\n" for k in range(200)]
    (tmp_path / "g.tsv").write_text("".join(rows))
    build_store([Source(tmp_path / "g.tsv")], tmp_path / "store")
    g = StoreKG(tmp_path / "store").graph
    for seeds in ([0], [1, 5], [g.n_nodes - 1]):
        for depth, cap in ((1, 3), (2, 40), (3, 10_000), (2, 0)):
            res = g.expand_grouped(np.array(seeds), depth, cap)
            assert res.triples is not None
            for got, want in zip(res.triples, g.triples(res.eids), strict=True):
                assert got.tolist() == want.tolist()


@pytest.mark.parametrize("n", [0, 1, 2, 3, 50, 5000])
def test_count_distinct_is_len_unique(n):
    from kgreason.kg.store.walk import count_distinct

    rng = np.random.default_rng(n)
    values = rng.integers(0, max(1, n // 3), size=n)  # many repeats
    scratch = np.full(max(1, n), -5, dtype=np.int32)
    assert count_distinct(values, scratch) == len(np.unique(values))


def test_from_store_on_walk_rows_is_from_store_on_edge_ids(tmp_path):
    """Clustering from the walk's rows (what prepare_graph passes) builds the same graph
    as from the sorted edge ids alone (heads looked up), inverse pairs folded, on both
    bounds, cut or not."""
    from kgreason.kg.inverses import known_inverses
    from kgreason.kg.loaders import Source
    from kgreason.kg.store import StoreKG, build_store
    from kgreason.pog.arrays.build import from_store
    from kgreason.pog.settings import PoGSettings
    from kgreason.pog.subgraph import walk_subgraph

    rng = np.random.default_rng(5)
    rows = []
    for _ in range(600):
        h, t = f"n{rng.integers(0, 50)}", f"n{rng.integers(0, 50)}"
        r = f"r{rng.integers(0, 4)}"
        rows.append(f"{h}\t{r}\t{t}\n")
        if r == "r0" and rng.random() < 0.7:  # an inverse relation, mostly mirrored
            rows.append(f"{t}\tr0_inverse\t{h}\n")
    rows += [f"hub\tr1\tn{k}\n" for k in range(50)] + rows[:20]  # a hub, repeated triples
    (tmp_path / "g.tsv").write_text("".join(rows))
    build_store([Source(tmp_path / "g.tsv")], tmp_path / "store")
    kg = StoreKG(tmp_path / "store")
    inv = known_inverses(kg)
    cols = ("h", "r", "t", "idst", "irel", "isrc", "optr", "iptr", "present")
    folded = 0
    for bound in ("edge-order", "relation-aware"):
        for cap in (5, 60, 300, 100_000):
            s = PoGSettings(max_subgraph_triples=cap, subgraph_bound=bound)
            for topics in (["n1"], ["hub", "n7"], ["n3", "n4", "n5"]):
                _, walk = walk_subgraph(kg, topics, s)
                a = from_store(kg, walk.eids, topics, inv, rows=walk.rows)
                b = from_store(kg, np.sort(walk.eids), topics, inv)
                assert all(np.array_equal(getattr(a, c), getattr(b, c)) for c in cols)
                assert a.names.tolist() == b.names.tolist()
                folded += a.triple_count() < len(set(walk.eids.tolist())) - 20
    assert folded  # inverse edges beside their mirrors were folded (not only repeats)
