"""Name and search indexes written at build time (see names.py for how they are read)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from kgreason.kg.store import runs
from kgreason.kg.store.build_norms import string_order_blocks, write_norms
from kgreason.kg.store.external import Sorter, StringFile, records_for
from kgreason.kg.store.format import StringTable, hash_bytes, hash_many, ranges


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


#: names per block of the name-index passes: a block's Python strings (~150 bytes each)
#: exist only while that block is worked on
NAME_BLOCK = 1 << 18
#: the memory budget of the name-index sorts when the caller gives none (`kg build`):
#: up to ~4M names sort in memory, more in runs merged from files
NAME_MEMORY = 1 << 30

Labels = Sequence[str] | StringTable | StringFile


def write_name_indexes(
    directory: Path,
    keys: Sequence[str] | None,
    labels: Labels,
    has_names: bool,
    *,
    key_hashes: np.ndarray | Iterable[np.ndarray] | None = None,
    block: int = NAME_BLOCK,
    memory: int = NAME_MEMORY,
) -> None:
    """Key and label hash indexes, normalised-name table, norm -> nodes, the sorted-name
    index and the trigram index.

    Labels are read a block at a time and every step that orders all of them (the hash
    indexes, grouping equal norms, the sorted-name order) is an external sort whose runs
    hold at most `memory` bytes' worth of records (external.records_for), so no step holds
    an array per entity. `labels` may be a table over files (external.StringFile, what
    the dump build passes); `key_hashes` (hash_many of the keys, whole or in blocks in key
    order) spares holding every key as a str. The files are the same for any budget."""
    table = labels if isinstance(labels, StringTable | StringFile) else StringTable.of(labels)
    n = len(table)
    records = records_for(memory)
    tmp = directory / ".name-runs"
    shutil.rmtree(tmp, ignore_errors=True)  # a killed run's files: start the step afresh
    tmp.mkdir()
    if key_hashes is None:
        names = keys or []
        key_hashes = (hash_many(names[a : a + block]) for a in range(0, len(names), block))
    elif isinstance(key_hashes, np.ndarray):
        key_hashes = [key_hashes]
    write_hash_index_sorted(directory, "keys", key_hashes, tmp, records)
    if has_names:
        table.save(directory, "labels")
        label_hashes = (hash_bytes(table.encoded(a, min(a + block, n))) for a in range(0, n, block))
        write_hash_index_sorted(directory, "labels", label_hashes, tmp, records)
    norm_hashes = write_norms(directory, table, tmp, block, records)
    _write_sorted(directory, "norms", norm_hashes)
    norms: StringTable | StringFile = (
        StringTable.open(directory, "norms") if n <= records else StringFile(directory, "norms")
    )
    # the sorted-name index of prefix search (prefix.py): norm ids in string order
    order = runs.NpyRaw(tmp / "norms.order.npy", np.int32)
    order.start()
    for part in string_order_blocks(norms, tmp, block, records):
        order.append(part)
    order.finish(directory)
    # bigger blocks (~2 KB per name) under a bigger budget: fewer runs to merge
    write_trigram_index(directory, norms, max(TRIGRAM_BLOCK, memory // 8192))
    shutil.rmtree(tmp, ignore_errors=True)


def write_hash_index_sorted(
    directory: Path, stem: str, hashes: Iterable[np.ndarray], tmp: Path, records: int
) -> None:
    """format.write_hash_index(directory, stem, all hashes, their positions), from the
    hashes given in blocks, by an external sort of (hash, position) records."""
    sorter = Sorter(tmp, stem, ("h", "v"), records, rising=True)
    done = 0
    for h in hashes:
        sorter.add(h=np.asarray(h, np.uint64), v=np.arange(done, done + len(h), dtype=np.int64))
        done += len(h)
    _write_sorted(directory, stem, sorter)


def _write_sorted(directory: Path, stem: str, sorter: Sorter) -> None:
    out = {
        "h": runs.NpyRaw(sorter.tmp / f"{stem}.hash.npy", np.uint64),
        "v": runs.NpyRaw(sorter.tmp / f"{stem}.val.npy", np.int32),
    }
    for o in out.values():
        o.raw.unlink(missing_ok=True)
        o.start()
    for blk in sorter.sorted():
        for c, o in out.items():
            o.append(blk[c])
    for o in out.values():
        o.finish(directory)


def string_order(
    table: StringTable | StringFile, block: int = NAME_BLOCK, memory: int = NAME_MEMORY
) -> np.ndarray:
    """Indices of the table's strings in code-point order (= UTF-8 byte order), without
    holding them all (build_norms.string_order_blocks), as one array."""
    with tempfile.TemporaryDirectory() as tmp:
        parts = list(string_order_blocks(table, Path(tmp), block, records_for(memory)))
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


#: names per block of the trigram index: its arrays take ~60 bytes per trigram, so a
#: block of this many names stays near 100 MB whatever the KG's size
TRIGRAM_BLOCK = 50_000
#: (trigram, name) pairs buffered across all runs while merging them: a round emits at
#: most this many, and its arrays take ~40 bytes per pair (~160 MB), however many runs
MERGE_PAIRS = 1 << 22


def write_trigram_index(
    directory: Path, norms: Sequence[str] | StringTable | StringFile, block: int = TRIGRAM_BLOCK
) -> None:
    """tri.codes / tri.indptr / tri.val (trigram -> names holding it) and norms.ntri.

    Built a block of names at a time: each block's distinct (trigram, name) pairs, sorted,
    go to a run file, and the runs are merged in one streaming pass, so memory is set by
    the block, not by the number of names (the same arrays as sorting all pairs at once)."""
    tmp = directory / ".trigram-runs"
    tmp.mkdir(exist_ok=True)
    ntri = runs.NpyRaw(tmp / "norms.ntri.npy", np.int32)
    ntri.raw.unlink(missing_ok=True)
    ntri.start()
    paths: list[Path] = []
    for a in range(0, len(norms), block):
        names = (
            norms.strings(a, min(a + block, len(norms)))
            if isinstance(norms, StringTable | StringFile)
            else norms[a : a + block]
        )
        codes, owner = byte_trigrams(names)
        pairs = runs.unique_sorted(
            (codes.astype(np.uint64) << np.uint64(32)) | (owner + a).astype(np.uint64)
        )
        po = (pairs & np.uint64(0xFFFFFFFF)).astype(np.int64)
        ntri.append(np.bincount(po - a, minlength=min(block, len(norms) - a)))
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
    ntri.finish(directory)
    shutil.rmtree(tmp, ignore_errors=True)
