"""The name indexes built a block of labels at a time equal the one-go build they replace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgreason.kg.ranking import normalize_name
from kgreason.kg.store import build_norms, external
from kgreason.kg.store.build_index import string_order, write_name_indexes
from kgreason.kg.store.format import StringTable, hash_many


def one_go(labels: list[str]) -> dict[str, np.ndarray]:
    """The previous implementation: a dict over every normalised name, a Python sort."""
    norm_id: dict[str, int] = {}
    node_norm = np.array([norm_id.setdefault(normalize_name(s), len(norm_id)) for s in labels])
    norms = list(norm_id)
    t = StringTable.of(norms)
    order = np.argsort(hash_many(norms), kind="stable")
    return {
        "norms.blob": t._blob,
        "norms.off": t._off,
        "norms.hash": hash_many(norms)[order],
        "norms.val": np.arange(len(norms))[order].astype(np.int32),
        "norm_nodes.indptr": np.concatenate(
            [[0], np.cumsum(np.bincount(node_norm, minlength=len(norms)))]
        ),
        "norm_nodes.val": np.argsort(node_norm, kind="stable").astype(np.int32),
        "norms.len": np.array([len(s) for s in norms], dtype=np.int32),
        "norms.order": np.array(sorted(range(len(norms)), key=norms.__getitem__), dtype=np.int32),
        "labels.blob": StringTable.of(labels)._blob,
        "labels.off": StringTable.of(labels)._off,
    }


def tricky_labels(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    parts = [
        "John Smith",
        "john smith",
        "JOHN  SMITH!",
        "Université de Liège",
        "日本",
        "ü",
        "a",
        "",
        "ab\x00",
        "ab",
        "the same sixteen bytes",
        "the same sixteen byteS",
        "0123456789abcdef",
        "0123456789abcdefg",
        "\U0001f600 smile",
        "m.0abc",
    ]
    out = []
    for i in range(n):
        k = int(rng.integers(1, 3))
        out.append(" ".join(rng.choice(parts, k)) + (str(i % 37) if i % 3 else ""))
    return [*out, "", "x", "X"]


@pytest.mark.parametrize("block", [1, 5, 64, 100_000])
def test_blocks_equal_one_go(tmp_path: Path, block: int) -> None:
    labels = tricky_labels(2000, 3)
    want = one_go(labels)
    d = tmp_path / "s"
    d.mkdir()
    write_name_indexes(
        d, None, StringTable.of(labels), True, key_hashes=hash_many(labels), block=block
    )
    for name, arr in want.items():
        got = np.load(d / f"{name}.npy")
        assert np.array_equal(got, arr.astype(got.dtype)), (block, name)
    assert not (d / ".name-runs").exists()


def test_a_list_of_labels_and_no_names(tmp_path: Path) -> None:
    labels = ["b", "a", "b", "c"]
    write_name_indexes(tmp_path, labels, labels, False)
    assert not (tmp_path / "labels.blob.npy").exists()
    assert np.load(tmp_path / "norms.order.npy").tolist() == [1, 0, 2]


def test_empty_table(tmp_path: Path) -> None:
    write_name_indexes(tmp_path, [], [], True)
    assert len(np.load(tmp_path / "norms.order.npy")) == 0
    assert np.load(tmp_path / "norm_nodes.indptr.npy").tolist() == [0]


def test_string_order_breaks_ties_past_sixteen_bytes() -> None:
    words = ["x" * 16 + s for s in ["b", "", "a", "ab", "\x00"]] + ["x" * 15, "y", "\u00e9", "z"]
    got = string_order(StringTable.of(words), block=2).tolist()
    assert got == sorted(range(len(words)), key=words.__getitem__)


def test_two_hashes_keep_colliding_names_apart(tmp_path: Path, monkeypatch) -> None:
    """Names whose first hash collides still get their own norm ids."""
    real = build_norms.hash_bytes

    def first_collides(enc, person=b""):
        h = real(enc, person)
        return h if person else np.zeros_like(h)

    monkeypatch.setattr(build_norms, "hash_bytes", first_collides)
    labels = ["alpha", "beta", "alpha", "gamma"]
    write_name_indexes(tmp_path, labels, labels, True)
    t = StringTable.open(tmp_path, "norms")
    assert t.strings(0, len(t)) == ["alpha", "beta", "gamma"]
    assert np.load(tmp_path / "norm_nodes.indptr.npy").tolist() == [0, 2, 3, 4]


def small_runs(monkeypatch: pytest.MonkeyPatch, records: int) -> int:
    """The `memory` that gives sorts of `records` records per run (no floor)."""
    monkeypatch.setattr(external, "MIN_READ", 1)
    return records * external.RECORD_BYTES


@pytest.mark.parametrize("rising", [False, True])
@pytest.mark.parametrize("records", [1, 2, 7, 1000])
def test_sorter_equals_a_lexsort(tmp_path: Path, records: int, rising: bool) -> None:
    rng = np.random.default_rng(records)
    n = 3000
    a = rng.integers(0, 5, n).astype(np.uint64)
    b = rng.integers(0, 3, n).astype(np.uint64) + np.uint64(2**63)  # past the int64 range
    row = np.arange(n) if rising else rng.permutation(n).astype(np.int64)
    sorter = external.Sorter(tmp_path, "t", ("a", "b", "row"), records, rising=rising)
    for s in range(0, n, 37):
        sorter.add(a=a[s : s + 37], b=b[s : s + 37], row=row[s : s + 37])
    blocks = list(sorter.sorted())
    order = np.lexsort((row, b, a))
    for col, want in (("a", a), ("b", b), ("row", row)):
        got = np.concatenate([blk[col] for blk in blocks])
        assert got.dtype == want.dtype and np.array_equal(got, want[order]), col
    assert records >= n or len(blocks) > 1
    assert not list(tmp_path.iterdir())  # run files removed


def test_gather_reads_ascending_positions(tmp_path: Path) -> None:
    data = np.arange(1000, dtype=np.int64) * 3
    data.tofile(tmp_path / "d")
    g = external.Gather(tmp_path / "d", np.int64, window=64)
    pos = np.array([0, 1, 63, 64, 500, 500, 999])
    assert g.take(pos).tolist() == (pos * 3).tolist()
    assert g.take(np.zeros(0, np.int64)).tolist() == []


def long_ties(n: int) -> list[str]:
    """Names sharing 16 bytes or more, in groups larger than a tiny run, and duplicates."""
    stems = ["the university of ", "Universität für M", "sixteen bytes ok", "日本語の大学です。"]
    return [stems[i % 4] + str((i * 7919) % (n // 3)) for i in range(n)] + ["", "", stems[0]]


@pytest.mark.parametrize(("block", "records"), [(1, 1), (2, 2), (7, 7), (3, 50), (64, 1000)])
def test_sorts_in_runs_equal_one_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int, records: int
) -> None:
    """Every file equal to the reference when every sort runs in tiny runs merged from
    files, on duplicate, empty, non-ASCII names and long 16-byte prefix ties."""
    labels = tricky_labels(200, 5) + long_ties(150)
    want = one_go(labels)
    memory = small_runs(monkeypatch, records)
    d = tmp_path / "s"
    d.mkdir()
    write_name_indexes(
        d,
        None,
        StringTable.of(labels),
        True,
        key_hashes=hash_many(labels),
        block=block,
        memory=memory,
    )
    for name, arr in want.items():
        got = np.load(d / f"{name}.npy")
        assert np.array_equal(got, arr.astype(got.dtype)), (block, records, name)
    keys = np.load(d / "keys.hash.npy"), np.load(d / "keys.val.npy")
    order = np.argsort(hash_many(labels), kind="stable")
    assert np.array_equal(keys[0], hash_many(labels)[order])
    assert np.array_equal(keys[1], order.astype(np.int32))
    assert not (d / ".name-runs").exists()


def test_labels_from_files_equal_labels_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A StringFile (what the dump build passes), key hashes in blocks, runs of 5."""
    labels = tricky_labels(500, 9) + long_ties(100)
    (tmp_path / "mem").mkdir()
    write_name_indexes(tmp_path / "mem", labels, labels, True)
    d = tmp_path / "file"
    d.mkdir()
    StringTable.of(labels).save(d, "labels")
    table = external.StringFile(d, "labels")
    assert table.strings(0, len(table)) == labels
    hashes = (hash_many(labels[a : a + 64]) for a in range(0, len(labels), 64))
    memory = small_runs(monkeypatch, 5)
    write_name_indexes(d, None, table, True, key_hashes=hashes, block=16, memory=memory)
    mem = {p.name: p.read_bytes() for p in sorted((tmp_path / "mem").iterdir())}
    assert {p.name: p.read_bytes() for p in sorted(d.iterdir())} == mem


@pytest.mark.parametrize("records", [1, 3, 1000])
def test_string_order_in_runs(monkeypatch: pytest.MonkeyPatch, records: int) -> None:
    words = [*long_ties(200), *tricky_labels(200, 1)]
    words = list(dict.fromkeys(words))  # the norms table holds distinct strings
    got = string_order(StringTable.of(words), block=5, memory=small_runs(monkeypatch, records))
    assert got.tolist() == sorted(range(len(words)), key=lambda i: words[i].encode())
