"""The store's bulk conversion of numpy results into strings and frozen dataclasses."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from kgreason.kg.base import Neighbor, Triple
from kgreason.kg.loaders import Source, load_all
from kgreason.kg.memory import MemoryKG
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store.format import SMALL, decode_slices
from kgreason.kg.store.materialize import FrozenRows, distinct, string_ranks

ALPHABET = ["a", "b", "Z", " ", "é", "ß", "日", "😀", "\x00", "\x01", "|"]


def _table(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    enc = [s.encode() for s in strings]
    off = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in enc], out=off[1:])
    return np.frombuffer(b"".join(enc), dtype=np.uint8), off


@pytest.mark.parametrize("with_nul", [False, True])
def test_decode_slices_matches_one_by_one(with_nul):
    rng = random.Random(3 + with_nul)
    letters = ALPHABET if with_nul else [c for c in ALPHABET if c != "\x00"]
    strings = ["".join(rng.choices(letters, k=rng.randint(0, 6))) for _ in range(300)]
    strings += ["", "", "tail"]  # empty strings, the blob's last string
    blob, off = _table(strings)
    for n in (0, 1, SMALL, SMALL + 1, 50, 600):
        ids = np.array([rng.randrange(len(strings)) for _ in range(n)], dtype=np.int64)
        if n:
            ids[0] = len(strings) - 1  # last string first: its separator is past the blob
        assert decode_slices(blob, off, ids) == [strings[i] for i in ids.tolist()]


def test_decode_slices_all_empty():
    blob, off = _table([""] * 20)
    assert decode_slices(blob, off, np.arange(20)) == [""] * 20


@pytest.mark.parametrize("n", [0, 1, 5, 3000])
def test_distinct_matches_np_unique(n):
    values = np.random.default_rng(n).zipf(1.5, n) % 500
    uniq, inv = distinct(values, 500)
    want_uniq, want_inv = np.unique(values, return_inverse=True)
    assert uniq.tolist() == want_uniq.tolist() and inv.tolist() == want_inv.tolist()


def test_string_ranks_follow_python_order():
    rng = random.Random(5)
    strings = list({"".join(rng.choices(ALPHABET, k=rng.randint(0, 5))) for _ in range(400)})
    rank = string_ranks(strings)
    assert [strings[i] for i in np.argsort(rank)] == sorted(strings)


def test_frozen_rows_equal_constructed_instances():
    heads, rels, tails = ["a", "b", "c"], ["r", "s", "r"], ["x", "y", "a"]
    build = FrozenRows(Triple)
    assert build.direct  # Triple is a slotted frozen dataclass: filled through its slots
    got = build(heads, rels, tails)
    want = [Triple(*t) for t in zip(heads, rels, tails, strict=True)]
    assert got == want and [hash(t) for t in got] == [hash(t) for t in want]
    assert sorted(got[::-1]) == sorted(want) and repr(got[0]) == repr(want[0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        got[0].head = "z"  # type: ignore[misc]
    assert FrozenRows(Neighbor)(["e"], ["r"], ["tail"])[0].triple("s") == Triple("s", "r", "e")
    with pytest.raises(ValueError, match="different lengths"):
        build(heads, rels, tails[:2])


def test_frozen_rows_fall_back_to_the_constructor():
    @dataclasses.dataclass(frozen=True)
    class Plain:
        a: str
        b: str

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: str
        b: str

        def __post_init__(self):
            if not self.a:
                raise ValueError("empty a")

    assert not FrozenRows(Plain).direct and not FrozenRows(Checked).direct
    assert FrozenRows(Plain)(["x"], ["y"]) == [Plain("x", "y")]
    with pytest.raises(ValueError, match="empty a"):
        FrozenRows(Checked)([""], ["y"])


async def test_store_answers_with_unusual_keys(tmp_path):
    """Keys holding the separator byte, multi-byte characters and case differences still
    decode and sort exactly as MemoryKG does."""
    rng = random.Random(9)
    nodes = ["a\x00b", "a", "B", "b", "Éclair", "eclair", "日本", "😀 x", "z|y", "a\x00"]
    nodes += [f"n{i}" for i in range(30)]
    lines = [
        f"{rng.choice(nodes)}\t{rng.choice(['rel', 'Rel', 'rél', 'r'])}\t{rng.choice(nodes)}"
        for _ in range(300)
    ]
    f = tmp_path / "g.tsv"
    f.write_text("\n".join(lines) + "\n")
    triples, names = load_all([Source(f)])
    mem = MemoryKG(triples, names)
    build_store([Source(f)], tmp_path / "s")
    store = StoreKG(tmp_path / "s")
    keys = sorted({x for t in triples for x in (t[0], t[2])})
    assert "a\x00b" in keys and "日本" in keys
    assert await store.neighbors(keys) == await mem.neighbors(keys)
    for seeds in (keys[:1], keys[:3], ["a\x00b", "😀 x"]):
        a, b = (
            await store.expand(seeds, 2, max_triples=10_000),
            await mem.expand(seeds, 2, max_triples=10_000),
        )
        assert a.triples == b.triples and len(a.triples) > SMALL
    every = np.arange(store.graph.n_edges)
    unsorted = store.triples_of(every)
    assert (
        store.triples_of(every, sort=True)
        == sorted(unsorted)
        == sorted({Triple(*t) for t in triples})
    )


async def test_store_without_key_ranks_sorts_the_same(tmp_path):
    """Stores built before `keys.rank` existed sort the expansion by comparing strings."""
    rng = random.Random(4)
    nodes = ["Zed", "zed", "Ärger", "b", "B2", "日", *(f"n{i}" for i in range(20))]
    lines = [f"{rng.choice(nodes)}\tr{rng.randint(0, 3)}\t{rng.choice(nodes)}" for _ in range(200)]
    f = tmp_path / "g.tsv"
    f.write_text("\n".join(lines) + "\n")
    build_store([Source(f)], tmp_path / "s")
    with_ranks = await StoreKG(tmp_path / "s").expand(["Zed", "日"], 3, max_triples=1000)
    (tmp_path / "s" / "keys.rank.npy").unlink()
    old = StoreKG(tmp_path / "s")
    assert old.index.key_rank is None
    without = await old.expand(["Zed", "日"], 3, max_triples=1000)
    assert with_ranks.triples == without.triples == sorted(with_ranks.triples)
    assert len(with_ranks.triples) > SMALL
