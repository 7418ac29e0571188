"""Flat run files for builds bigger than memory (the Freebase dump build, the trigram index): raw arrays appended to, read back in blocks,
truncated to a checkpoint, and turned into `.npy` files in place.

The build never maps its inputs: it reads them with explicit `fromfile` calls so that its
resident memory is what it asks for, not whatever the page cache lends a mapping.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import DTypeLike

#: bytes reserved at the head of a `.raw` file for the `.npy` header written at the end
HEADER = 128


def append(path: Path, arr: np.ndarray) -> None:
    with open(path, "ab") as f:
        np.ascontiguousarray(arr).tofile(f)


def append_bytes(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def write(path: Path, arr: np.ndarray) -> None:
    tmp = path.with_name(path.name + ".part")
    np.ascontiguousarray(arr).tofile(tmp)
    os.replace(tmp, path)


def read(path: Path, dtype: DTypeLike, start: int = 0, count: int = -1) -> np.ndarray:
    dt = np.dtype(dtype)
    if not path.exists():
        return np.zeros(0, dtype=dt)
    return np.fromfile(path, dtype=dt, count=count, offset=start * dt.itemsize)


def items(path: Path, dtype: DTypeLike, *, header: int = 0) -> int:
    return (path.stat().st_size - header) // np.dtype(dtype).itemsize if path.exists() else 0


def sizes(paths: Sequence[Path]) -> dict[str, int]:
    """The byte size of each existing file: a checkpoint `restore` can go back to."""
    return {p.name: p.stat().st_size for p in paths if p.exists()}


def restore(directory: Path, pattern: str, recorded: dict[str, int]) -> None:
    """Truncate the files matching `pattern` to their checkpointed sizes; remove those the
    checkpoint does not know (written after it, by a killed run)."""
    for p in directory.glob(pattern):
        if p.name in recorded:
            with open(p, "r+b") as f:
                f.truncate(recorded[p.name])
        else:
            p.unlink()


class NpyRaw:
    """A `.npy` file written in appended pieces: data follows `HEADER` reserved bytes, and
    `finish` writes the real header there and renames it, so no copy is ever made."""

    def __init__(self, path: Path, dtype: DTypeLike):
        self.path = path
        self.dtype = np.dtype(dtype)
        self.raw = path.with_name(path.name + ".raw")

    def start(self) -> None:
        if not self.raw.exists():
            self.raw.write_bytes(b"\0" * HEADER)

    def append(self, arr: np.ndarray) -> None:
        append(self.raw, np.asarray(arr, dtype=self.dtype))

    def count(self) -> int:
        return items(self.raw, self.dtype, header=HEADER)

    def finish(self, dest: Path) -> None:
        count = self.count()
        header = _npy_header(self.dtype, count)
        with open(self.raw, "r+b") as f:
            f.write(header)
        os.replace(self.raw, dest / self.path.name)


def _npy_header(dtype: np.dtype, count: int) -> bytes:
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf,
        {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (count,)},
    )
    out = buf.getvalue()
    if len(out) != HEADER:  # 1-d headers are padded to 128 bytes for any count below 10**40
        raise AssertionError(f"npy header of {len(out)} bytes, not {HEADER}")
    return out


def unique_sorted(arr: np.ndarray) -> np.ndarray:
    """np.unique(arr) by one sort and a mask: numpy 2's hash path for unique is 3x slower
    on byte-string keys and 2x on 64-bit integers, and this one sort is all it needs."""
    arr = np.sort(arr)
    if len(arr) > 1:
        arr = arr[np.concatenate([[True], arr[1:] != arr[:-1]])]
    return arr


def merge_unique(runs: Sequence[Path], dtype: str, block: int) -> Iterator[np.ndarray]:
    """The sorted union of sorted, duplicate-free runs, in sorted duplicate-free blocks;
    memory: `block` items per run. Each round emits everything up to the smallest of the
    runs' current last items, so every item is emitted once, in order."""
    dt = np.dtype(dtype)
    total = [items(p, dt) for p in runs]
    pos = [0] * len(runs)
    buf = [np.zeros(0, dtype=dt) for _ in runs]
    while True:
        for i, p in enumerate(runs):
            if len(buf[i]) == 0 and pos[i] < total[i]:
                buf[i] = read(p, dt, pos[i], min(block, total[i] - pos[i]))
                pos[i] += len(buf[i])
        live = [i for i in range(len(runs)) if len(buf[i])]
        if not live:
            return
        # a run with nothing left to read is not a bound: it can never go below it
        bounded = [i for i in live if pos[i] < total[i]] or live
        bound = min(buf[i][-1] for i in bounded)
        parts = []
        for i in live:
            cut = int(np.searchsorted(buf[i], bound, side="right"))
            parts.append(buf[i][:cut])
            buf[i] = buf[i][cut:]
        yield unique_sorted(np.concatenate(parts))


def lookup(sorted_path: Path, dtype: str, queries: np.ndarray, block: int) -> np.ndarray:
    """Position of each of `queries` (sorted, duplicate-free, all present) in the sorted
    file, reading the file once in blocks."""
    out = np.full(len(queries), -1, dtype=np.int64)
    total = items(sorted_path, dtype)
    for start in range(0, total, block):
        part = read(sorted_path, dtype, start, min(block, total - start))
        lo = int(np.searchsorted(queries, part[0], side="left"))
        hi = int(np.searchsorted(queries, part[-1], side="right"))
        if hi > lo:
            out[lo:hi] = start + np.searchsorted(part, queries[lo:hi])
    if len(out) and (out < 0).any():
        raise AssertionError("a key missing from the merged key table")
    return out
