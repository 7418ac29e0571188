"""Name and search indexes written at build time (see names.py for how they are read)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kgreason.kg.ranking import normalize_name
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


def unique_sorted(arr: np.ndarray) -> np.ndarray:
    """np.unique(arr) by one sort and a mask: numpy 2's hash path for unique is 3x slower
    on byte-string keys and 2x on 64-bit integers, and this one sort is all it needs."""
    arr = np.sort(arr)
    if len(arr) > 1:
        arr = arr[np.concatenate([[True], arr[1:] != arr[:-1]])]
    return arr


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
    directory: Path, keys: list[str], labels: list[str], has_names: bool
) -> None:
    """Exact label index, normalised-name table, norm -> nodes, the sorted-name index and
    the trigram index."""
    n = len(keys)
    ids = np.arange(n, dtype=np.int64)
    write_hash_index(directory, "keys", hash_many(keys), ids)
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
    codes, owner = byte_trigrams(norms)
    pairs = unique_sorted((codes.astype(np.uint64) << np.uint64(32)) | owner.astype(np.uint64))
    pc = (pairs >> np.uint64(32)).astype(np.uint32)
    po = (pairs & np.uint64(0xFFFFFFFF)).astype(np.int32)
    first = np.flatnonzero(np.concatenate([[True], pc[1:] != pc[:-1]])) if len(pc) else pc[:0]
    uniq = pc[first]
    save_array(directory, "tri.codes", uniq)
    save_array(directory, "tri.indptr", np.append(first, len(pc)).astype(np.int64))
    save_array(directory, "tri.val", po)
    save_array(directory, "norms.ntri", np.bincount(po, minlength=len(norms)).astype(np.int32))
