"""Name and search indexes written at build time (see names.py for how they are read)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kgreason.kg.ranking import normalize_name
from kgreason.kg.store import runs
from kgreason.kg.store.format import (
    hash_many,
    ranges,
    save_array,
    write_hash_index,
    write_strings,
)


def key_ranks(keys: Sequence[str]) -> np.ndarray:
    """rank[v] = position of key v in Python's (code-point) string order. Stored as
    `keys.rank` so that queries sort triples by key with integers instead of strings."""
    n = len(keys)
    order = np.fromiter(sorted(range(n), key=keys.__getitem__), np.int64, n)
    rank = np.empty(n, dtype=np.int32 if n < 2**31 else np.int64)
    rank[order] = np.arange(n)
    return rank


def csr(group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, order): order lists members by group, keeping their original order."""
    order = np.argsort(group, kind="stable")
    indptr = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(group, minlength=n_groups), out=indptr[1:])
    return indptr, order


def byte_trigrams(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(codes, owner): every byte trigram of " " + s + " " as a 24-bit code, with the index
    of the string it comes from. Byte (not character) trigrams: fine for candidate lookup."""
    enc = [f" {s} ".encode() for s in strings]
    lens = np.fromiter((len(b) for b in enc), np.int64, len(enc))
    off = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    blob = np.frombuffer(b"".join(enc), dtype=np.uint8).astype(np.uint32)
    counts = np.maximum(lens - 2, 0)
    starts = ranges(off[:-1], counts)
    codes = (blob[starts] << 16) | (blob[starts + 1] << 8) | blob[starts + 2]
    owner = np.repeat(np.arange(len(enc), dtype=np.int64), counts)
    return codes, owner


def write_name_indexes(
    directory: Path,
    keys: Sequence[str] | None,
    labels: list[str],
    has_names: bool,
    *,
    key_hashes: np.ndarray | None = None,
) -> None:
    """Exact label index, normalised-name table, norm -> nodes, the sorted-name index and
    the trigram index. `key_hashes` (hash_many of the keys, computed by the caller in
    blocks) spares a large build holding every key as a str beside every label."""
    n = len(labels)
    ids = np.arange(n, dtype=np.int64)
    hashes = key_hashes if key_hashes is not None else hash_many(keys or [])
    write_hash_index(directory, "keys", hashes, ids)
    if has_names:
        write_strings(directory, "labels", labels)
        write_hash_index(directory, "labels", hash_many(labels), ids)
    norm_id: dict[str, int] = {}
    node_norm = np.fromiter(
        (norm_id.setdefault(normalize_name(s), len(norm_id)) for s in labels), np.int64, n
    )
    norms = list(norm_id)
    write_strings(directory, "norms", norms)
    write_hash_index(directory, "norms", hash_many(norms), np.arange(len(norms)))
    indptr, order = csr(node_norm, len(norms))
    save_array(directory, "norm_nodes.indptr", indptr)
    save_array(directory, "norm_nodes.val", order.astype(np.int32))
    save_array(directory, "norms.len", np.fromiter((len(s) for s in norms), np.int32, len(norms)))
    # the sorted-name index of prefix search (prefix.py): norm ids in string order
    save_array(directory, "norms.order", key_ranks(norms).argsort().astype(np.int32))
    write_trigram_index(directory, norms)


#: names per block of the trigram index: its arrays take ~60 bytes per trigram, so a
#: block of this many names stays near 100 MB whatever the KG's size
TRIGRAM_BLOCK = 50_000


def write_trigram_index(directory: Path, norms: Sequence[str], block: int = TRIGRAM_BLOCK) -> None:
    """tri.codes / tri.indptr / tri.val (trigram -> names holding it) and norms.ntri.

    Built a block of names at a time: each block's distinct (trigram, name) pairs, sorted,
    go to a run file, and the runs are merged in one streaming pass, so memory is set by
    the block, not by the number of names (the same arrays as sorting all pairs at once)."""
    ntri = np.zeros(len(norms), dtype=np.int32)
    tmp = directory / ".trigram-runs"
    tmp.mkdir(exist_ok=True)
    paths: list[Path] = []
    for a in range(0, len(norms), block):
        codes, owner = byte_trigrams(norms[a : a + block])
        pairs = runs.unique_sorted(
            (codes.astype(np.uint64) << np.uint64(32)) | (owner + a).astype(np.uint64)
        )
        po = (pairs & np.uint64(0xFFFFFFFF)).astype(np.int64)
        ntri[a : a + block] = np.bincount(po - a, minlength=min(block, len(norms) - a))
        paths.append(tmp / f"{len(paths):05d}")
        runs.write(paths[-1], pairs)
    out = {
        "codes": runs.NpyRaw(tmp / "tri.codes.npy", np.uint32),
        "indptr": runs.NpyRaw(tmp / "tri.indptr.npy", np.int64),
        "val": runs.NpyRaw(tmp / "tri.val.npy", np.int32),
    }
    for o in out.values():
        o.start()
    done, last = 0, None
    for pairs in runs.merge_unique(paths, "u8", max(block * 8, 1 << 16)):
        pc = (pairs >> np.uint64(32)).astype(np.uint32)
        new = np.concatenate([[pc[0] != last], pc[1:] != pc[:-1]])
        out["codes"].append(pc[new])
        out["indptr"].append(done + np.flatnonzero(new))
        out["val"].append((pairs & np.uint64(0xFFFFFFFF)).astype(np.int32))
        done, last = done + len(pairs), pc[-1]
    out["indptr"].append(np.array([done], dtype=np.int64))
    for o in out.values():
        o.finish(directory)
    shutil.rmtree(tmp, ignore_errors=True)
    save_array(directory, "norms.ntri", ntri)
