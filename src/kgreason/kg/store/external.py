"""External-memory helpers of the build: records sorted in runs of a bounded size and
merged, flat files read at ascending positions, and a string table read from its files.

Like runs.py, nothing here maps a file: every read is an explicit `fromfile` or `pread`,
so the resident memory of a step is what it asks for, not what a mapping has touched.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import DTypeLike

Columns = dict[str, np.ndarray]

#: bytes of budget per record of a Sorter's run: the columns (up to 24 bytes), their
#: concatenation, the sort's index and the gathered copy, the caller's arrays of a merged
#: block, and the next Sorter's records filling meanwhile (~140 B per record measured at
#: the name-index step's peak), with room for the blocks of names and read windows
RECORD_BYTES = 256
#: items read from a run at a time while merging, however many runs there are
MIN_READ = 1 << 12


def records_for(memory: int) -> int:
    """Records per run (and per merge round) for a memory budget in bytes."""
    return max(MIN_READ, memory // RECORD_BYTES)


def _length(cols: Columns) -> int:
    return len(next(iter(cols.values()))) if cols else 0


class Sorter:
    """Records (parallel columns) added in any number of blocks, given back in ascending
    order of the `keys` columns (lexicographic), in blocks. At most `records` records are
    held: beyond that, sorted runs go to files under `tmp` and are merged when read. The
    keys must tell every record apart (include a row number), so the order is unique and
    the same whatever the block sizes."""

    def __init__(
        self, tmp: Path, name: str, keys: Sequence[str], records: int, *, rising: bool = False
    ):
        self.tmp, self.name, self.keys = tmp, name, tuple(keys)
        # records added in ascending order of the last key (a row number): a stable sort
        # on the other keys orders them, runs are merged in the order they were written
        self._by = self.keys[:-1] if rising and len(self.keys) > 1 else self.keys
        self.records = max(1, records)
        self._pending: list[Columns] = []
        self._held = 0
        self._runs: list[tuple[Path, int]] = []
        self._dtypes: dict[str, np.dtype] = {}

    def add(self, **cols: np.ndarray) -> None:
        self._dtypes = {c: a.dtype for c, a in cols.items()}
        self._pending.append(cols)
        self._held += _length(cols)
        if self._held >= self.records:
            self._spill()

    def _sorted_pending(self) -> Columns:
        cols = {c: np.concatenate([p[c] for p in self._pending]) for c in self._dtypes}
        self._pending, self._held = [], 0
        order = self._order(cols)
        for c in cols:
            cols[c] = cols[c][order]
        return cols

    def _spill(self) -> None:
        cols = self._sorted_pending()
        base = self.tmp / f"{self.name}-{len(self._runs):05d}"
        for c, a in cols.items():
            a.tofile(f"{base}.{c}")
        self._runs.append((base, _length(cols)))

    def sorted(self) -> Iterator[Columns]:
        """Every record added, in key order; the run files are removed at the end."""
        if not self._runs:
            if self._held:
                yield self._sorted_pending()
            return
        if self._held:
            self._spill()
        yield from self._merge()
        for base, _ in self._runs:
            for c in self._dtypes:
                Path(f"{base}.{c}").unlink(missing_ok=True)
        self._runs = []

    def _read(self, i: int, start: int, count: int) -> Columns:
        base = self._runs[i][0]
        return {
            c: np.fromfile(f"{base}.{c}", dt, count, offset=start * dt.itemsize)
            for c, dt in self._dtypes.items()
        }

    def _merge(self) -> Iterator[Columns]:
        """Each round emits every record up to the smallest of the runs' last buffered
        records (a run read to its end bounds nothing), so all come out once, in order;
        a round holds at most `records` records (MIN_READ per run at the least)."""
        n = len(self._runs)
        per_run = max(self.records // n, MIN_READ)
        total = [count for _, count in self._runs]
        pos = [0] * n
        bufs: list[Columns] = [{} for _ in range(n)]
        while True:
            for i in range(n):
                if _length(bufs[i]) == 0 and pos[i] < total[i]:
                    bufs[i] = self._read(i, pos[i], min(per_run, total[i] - pos[i]))
                    pos[i] += _length(bufs[i])
            live = [i for i in range(n) if _length(bufs[i])]
            if not live:
                return
            bounded = [i for i in live if pos[i] < total[i]] or live
            bound = min(tuple(bufs[i][k][-1].item() for k in self.keys) for i in bounded)
            parts = []
            for i in live:
                cut = _upto(bufs[i], self.keys, bound)
                parts.append({c: a[:cut] for c, a in bufs[i].items()})
                bufs[i] = {c: a[cut:] for c, a in bufs[i].items()}
            cols = {c: np.concatenate([p[c] for p in parts]) for c in self._dtypes}
            del parts
            order = self._order(cols)
            yield {c: a[order] for c, a in cols.items()}

    def _order(self, cols: Columns) -> np.ndarray:
        """A stable sort (so the pieces' order breaks ties; timsort finds their runs)."""
        if len(self._by) == 1:
            return np.argsort(cols[self._by[0]], kind="stable")
        return np.lexsort([cols[k] for k in reversed(self._by)])


def _upto(cols: Columns, keys: Sequence[str], bound: tuple[int, ...]) -> int:
    """How many of the (sorted) records are at most `bound`, lexicographically."""
    lo, hi = 0, _length(cols)
    for j, k in enumerate(keys):
        a = cols[k][lo:hi]
        v = a.dtype.type(bound[j])
        right = int(np.searchsorted(a, v, "right"))
        if j == len(keys) - 1:
            return lo + right
        left = int(np.searchsorted(a, v, "left"))
        if left == right:
            return lo + left
        lo, hi = lo + left, lo + right
    return lo


def npy_data_offset(path: Path) -> int:
    """Where a `.npy` file's data begins."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            np.lib.format.read_array_header_1_0(f)
        else:
            np.lib.format.read_array_header_2_0(f)
        return f.tell()


class Gather:
    """Items of a flat file (after `header` bytes) at ascending positions, read a window
    of `window` items at a time: a pass over ascending positions reads the file once."""

    def __init__(self, path: Path, dtype: DTypeLike, header: int = 0, window: int = 1 << 20):
        self.path, self.dtype, self.header, self.window = path, np.dtype(dtype), header, window
        self.total = (path.stat().st_size - header) // self.dtype.itemsize
        self._at, self._chunk = -1, np.zeros(0, self.dtype)

    def take(self, pos: np.ndarray) -> np.ndarray:
        pos = np.asarray(pos, dtype=np.int64)
        out = np.empty(len(pos), self.dtype)
        if not len(pos):
            return out
        win = pos // self.window
        cuts = [0, *(np.flatnonzero(win[1:] != win[:-1]) + 1).tolist(), len(pos)]
        for s, e in itertools.pairwise(cuts):
            w = int(win[s])
            if w != self._at:
                first = w * self.window
                count = min(self.window, self.total - first)
                offset = self.header + first * self.dtype.itemsize
                self._chunk = np.fromfile(self.path, self.dtype, count, offset=offset)
                self._at = w
            out[s:e] = self._chunk[pos[s:e] - w * self.window]
        return out


class StringFile:
    """A string table (`STEM.blob.npy`, `STEM.off.npy`) read from its files a block at a
    time, never loaded or mapped whole: what the dump build's name indexes read."""

    def __init__(self, directory: Path, stem: str):
        self.directory, self.stem = directory, stem
        self.blob_path = directory / f"{stem}.blob.npy"
        self.off_path = directory / f"{stem}.off.npy"
        self._blob_at = npy_data_offset(self.blob_path)
        self._off_at = npy_data_offset(self.off_path)
        self._n = (self.off_path.stat().st_size - self._off_at) // 8 - 1

    def __len__(self) -> int:
        return self._n

    def offsets(self, a: int, b: int) -> np.ndarray:
        """off[a..b] (b - a + 1 values)."""
        return np.fromfile(self.off_path, np.int64, b - a + 1, offset=self._off_at + 8 * a)

    def slab(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """(the bytes of strings a..b-1, their offsets into those bytes: b - a + 1 values)."""
        off = self.offsets(a, b)
        size = int(off[-1] - off[0])
        blob = np.fromfile(self.blob_path, np.uint8, size, offset=self._blob_at + int(off[0]))
        return blob, off - off[0]

    def encoded(self, a: int, b: int) -> list[bytes]:
        blob, off = self.slab(a, b)
        buf, cuts = blob.tobytes(), off.tolist()
        return [buf[x:y] for x, y in itertools.pairwise(cuts)]

    def strings(self, a: int, b: int) -> list[str]:
        return [x.decode() for x in self.encoded(a, b)]

    def many_encoded(self, ids: Sequence[int]) -> list[bytes]:
        """Strings at arbitrary ids, one `pread` each (for the few that need it)."""
        out = []
        with open(self.off_path, "rb") as fo, open(self.blob_path, "rb") as fb:
            for i in ids:
                a, b = np.frombuffer(os.pread(fo.fileno(), 16, self._off_at + 8 * i), np.int64)
                out.append(os.pread(fb.fileno(), int(b - a), self._blob_at + int(a)))
        return out

    def save(self, directory: Path, stem: str) -> None:
        """Nothing to do when the files are already there; else copied."""
        if (directory.resolve(), stem) == (self.directory.resolve(), self.stem):
            return
        shutil.copyfile(self.blob_path, directory / f"{stem}.blob.npy")
        shutil.copyfile(self.off_path, directory / f"{stem}.off.npy")
