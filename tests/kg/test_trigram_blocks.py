"""The trigram index built a block of names at a time equals the one-sort build."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kgreason.kg.store.build_index import byte_trigrams, write_trigram_index

FILES = ("tri.codes.npy", "tri.indptr.npy", "tri.val.npy", "norms.ntri.npy")


def one_sort(norms: list[str]) -> dict[str, np.ndarray]:
    codes, owner = byte_trigrams(norms)
    pairs = np.unique((codes.astype(np.uint64) << np.uint64(32)) | owner.astype(np.uint64))
    pc = (pairs >> np.uint64(32)).astype(np.uint32)
    po = (pairs & np.uint64(0xFFFFFFFF)).astype(np.int32)
    uniq, first = np.unique(pc, return_index=True)
    return {
        "tri.codes.npy": uniq,
        "tri.indptr.npy": np.append(first, len(pc)).astype(np.int64),
        "tri.val.npy": po,
        "norms.ntri.npy": np.bincount(po, minlength=len(norms)).astype(np.int32),
    }


def test_blocks_give_the_same_index(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    words = ["nijmegen", "weeze", "airport", "gelderland", "café", "日本", "a", ""]
    norms = [" ".join(rng.choice(words, rng.integers(1, 4))) + str(i % 50) for i in range(3000)]
    norms += ["", "x"]
    want = one_sort(norms)
    for block in (1, 7, 250, 10_000):
        d = tmp_path / str(block)
        d.mkdir()
        write_trigram_index(d, norms, block)
        for f in FILES:
            got = np.load(d / f)
            assert got.dtype == want[f].dtype and np.array_equal(got, want[f]), (block, f)
        assert sorted(p.name for p in d.iterdir()) == sorted(FILES)


def test_no_names(tmp_path: Path) -> None:
    write_trigram_index(tmp_path, [])
    assert np.load(tmp_path / "tri.indptr.npy").tolist() == [0]
    assert len(np.load(tmp_path / "tri.codes.npy")) == 0
