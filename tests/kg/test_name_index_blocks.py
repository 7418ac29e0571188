"""The name indexes built a block of labels at a time equal the one-go build they replace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgreason.kg.ranking import normalize_name
from kgreason.kg.store import build_index
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
    real = build_index.hash_bytes

    def first_collides(enc, person=b""):
        h = real(enc, person)
        return h if person else np.zeros_like(h)

    monkeypatch.setattr(build_index, "hash_bytes", first_collides)
    labels = ["alpha", "beta", "alpha", "gamma"]
    write_name_indexes(tmp_path, labels, labels, True)
    t = StringTable.open(tmp_path, "norms")
    assert t.strings(0, len(t)) == ["alpha", "beta", "gamma"]
    assert np.load(tmp_path / "norm_nodes.indptr.npy").tolist() == [0, 2, 3, 4]
