"""Name and search indexes written at build time (see names.py for how they are read)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import DTypeLike

from kgreason.kg.ranking import normalize_name
from kgreason.kg.store import runs
from kgreason.kg.store.format import (
    StringTable,
    hash_bytes,
    hash_many,
    ranges,
    save_array,
    write_hash_index,
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


#: names per block of the name-index passes: each name costs ~30 bytes of arrays kept
#: for the whole table, and a block's Python strings (~150 bytes each) exist only while
#: that block is worked on
NAME_BLOCK = 1 << 18


def write_name_indexes(
    directory: Path,
    keys: Sequence[str] | None,
    labels: Sequence[str] | StringTable,
    has_names: bool,
    *,
    key_hashes: np.ndarray | None = None,
    block: int = NAME_BLOCK,
) -> None:
    """Exact label index, normalised-name table, norm -> nodes, the sorted-name index and
    the trigram index.

    Built a block of labels at a time, so that no step holds every label or every
    normalised name as a Python object (a 5.8M-entity dump build peaked at 3.1 GB in the
    one-go version). `labels` may be a StringTable over a file; `key_hashes` (hash_many of
    the keys, computed by the caller in blocks) spares holding every key as a str."""
    table = labels if isinstance(labels, StringTable) else StringTable.of(labels)
    n = len(table)
    ids = np.arange(n, dtype=np.int64)
    hashes = key_hashes if key_hashes is not None else hash_many(keys or [])
    write_hash_index(directory, "keys", hashes, ids)
    if has_names:
        table.save(directory, "labels")
        label_hashes = [hash_bytes(table.encoded(a, min(a + block, n))) for a in range(0, n, block)]
        write_hash_index(directory, "labels", _cat(label_hashes, np.uint64), ids)
    tmp = directory / ".name-runs"
    tmp.mkdir(exist_ok=True)
    node_norm, norms, norm_hashes, norm_chars = _normalised(table, tmp, block)
    write_hash_index(directory, "norms", norm_hashes, np.arange(len(norms)))
    indptr, order = csr(node_norm, len(norms))
    del node_norm
    save_array(directory, "norm_nodes.indptr", indptr)
    save_array(directory, "norm_nodes.val", order.astype(np.int32))
    del order
    save_array(directory, "norms.len", norm_chars)
    # the sorted-name index of prefix search (prefix.py): norm ids in string order
    save_array(directory, "norms.order", string_order(norms, block).astype(np.int32))
    write_trigram_index(directory, norms, TRIGRAM_BLOCK)
    shutil.rmtree(tmp, ignore_errors=True)


def _cat(parts: list[np.ndarray], dtype: DTypeLike) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _normalised(
    labels: StringTable, tmp: Path, block: int
) -> tuple[np.ndarray, StringTable, np.ndarray, np.ndarray]:
    """(node -> norm id, the norms table, their hash_many, their lengths in characters).

    Norm ids follow first appearance in node order, as a dict.setdefault pass would number
    them. Distinct norms are told apart by two independent 64-bit hashes, so grouping is
    one sort of integers; each block's norms go to a scratch file, and the first
    appearance of each is copied from there into norms.blob."""
    n = len(labels)
    scratch = runs.NpyRaw(tmp / "all.blob.npy", np.uint8)
    scratch.start()
    h1, h2, lens, chars = [], [], [], []
    for a in range(0, n, block):
        norms = [normalize_name(s) for s in labels.strings(a, min(a + block, n))]
        enc = [s.encode() for s in norms]
        h1.append(hash_bytes(enc))
        h2.append(hash_bytes(enc, person=b"kgreason-norm"))
        lens.append(np.fromiter(map(len, enc), np.int64, len(enc)))
        chars.append(np.fromiter(map(len, norms), np.int32, len(norms)))
        scratch.append(np.frombuffer(b"".join(enc), dtype=np.uint8))
    node_norm, firsts = _first_appearances(_cat(h1, np.uint64), _cat(h2, np.uint64))
    hashes = _cat(h1, np.uint64)[firsts]
    del h1, h2
    lens_all = _cat(lens, np.int64)
    del lens
    src_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens_all, out=src_off[1:])
    size = int(src_off[-1])
    src = (
        np.memmap(scratch.raw, np.uint8, "r", runs.HEADER, (size,))
        if size
        else np.zeros(0, np.uint8)
    )
    out = runs.NpyRaw(tmp / "norms.blob.npy", np.uint8)
    out.start()
    for a in range(0, len(firsts), block):
        f = firsts[a : a + block]
        out.append(src[ranges(src_off[f], lens_all[f])])
    del src
    out.finish(tmp)
    off = np.zeros(len(firsts) + 1, dtype=np.int64)
    np.cumsum(lens_all[firsts], out=off[1:])
    table = StringTable(np.load(tmp / "norms.blob.npy", mmap_mode="r").view(np.ndarray), off)
    table.save(tmp.parent, "norms")
    return node_norm, table, hashes, _cat(chars, np.int32)[firsts]


def _first_appearances(h1: np.ndarray, h2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(group id of each row, numbered by first appearance; the first row of each group,
    ascending) for rows keyed by the pair (h1, h2)."""
    n = len(h1)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.lexsort((h2, h1))  # stable: within a group, rows stay ascending
    s1, s2 = h1[order], h2[order]
    new = np.ones(n, dtype=bool)
    new[1:] = (s1[1:] != s1[:-1]) | (s2[1:] != s2[:-1])
    del s1, s2
    first = order[new]
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    group = np.empty(n, dtype=np.int64)
    group[order] = rank[np.cumsum(new) - 1]
    return group, np.sort(first)


def string_order(table: StringTable, block: int = NAME_BLOCK) -> np.ndarray:
    """Indices of the table's strings in code-point order (= UTF-8 byte order), without
    holding them all: one integer sort on each string's first 16 bytes, then the strings
    that tie there are sorted among themselves."""
    n = len(table)
    blob, off = table._blob, table._off
    hi, lo = np.zeros(n, np.uint64), np.zeros(n, np.uint64)
    cols = np.arange(16)
    for a in range(0, n, block):
        b = min(a + block, n)
        starts = np.asarray(off[a:b], dtype=np.int64)
        take = np.minimum(np.asarray(off[a + 1 : b + 1]) - starts, 16)
        mask = cols < take[:, None]
        pref = np.zeros((b - a, 16), dtype=np.uint8)
        pref[mask] = blob[(starts[:, None] + cols)[mask]]
        key = pref.view(">u8").astype(np.uint64)  # big-endian: integer order = byte order
        hi[a:b], lo[a:b] = key[:, 0], key[:, 1]
    order = np.lexsort((lo, hi))
    tie = (hi[order][1:] == hi[order][:-1]) & (lo[order][1:] == lo[order][:-1])
    del hi, lo
    edge = np.diff(np.concatenate([[0], tie.astype(np.int8), [0]]))
    runs_of_ties = zip(
        np.flatnonzero(edge == 1).tolist(), np.flatnonzero(edge == -1).tolist(), strict=True
    )
    for s, e in runs_of_ties:
        members = order[s : e + 1].tolist()
        members.sort(key=lambda i: blob[off[i] : off[i + 1]].tobytes())
        order[s : e + 1] = members
    return order


#: names per block of the trigram index: its arrays take ~60 bytes per trigram, so a
#: block of this many names stays near 100 MB whatever the KG's size
TRIGRAM_BLOCK = 50_000
#: (trigram, name) pairs buffered across all runs while merging them: a round emits at
#: most this many, and its arrays take ~40 bytes per pair (~160 MB), however many runs
MERGE_PAIRS = 1 << 22


def write_trigram_index(
    directory: Path, norms: Sequence[str] | StringTable, block: int = TRIGRAM_BLOCK
) -> None:
    """tri.codes / tri.indptr / tri.val (trigram -> names holding it) and norms.ntri.

    Built a block of names at a time: each block's distinct (trigram, name) pairs, sorted,
    go to a run file, and the runs are merged in one streaming pass, so memory is set by
    the block, not by the number of names (the same arrays as sorting all pairs at once)."""
    ntri = np.zeros(len(norms), dtype=np.int32)
    tmp = directory / ".trigram-runs"
    tmp.mkdir(exist_ok=True)
    paths: list[Path] = []
    for a in range(0, len(norms), block):
        names = (
            norms.strings(a, min(a + block, len(norms)))
            if isinstance(norms, StringTable)
            else norms[a : a + block]
        )
        codes, owner = byte_trigrams(names)
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
    per_run = max(MERGE_PAIRS // max(len(paths), 1), 1 << 12)
    for pairs in runs.merge_unique(paths, "u8", per_run):
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
