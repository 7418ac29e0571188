"""On-disk building blocks of the store: string tables, hash indexes and the manifest.

Everything is a plain `.npy` file opened with `mmap_mode="r"`, so opening a store reads
only the manifest and the relation list; pages are faulted in as queries touch them.
See docs/kg-store.md for the full layout.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kgreason.kg.base import KGError

FORMAT_VERSION = 2  # 2: names normalised without punctuation; inverse relations in the manifest
MANIFEST = "manifest.json"
RELATIONS = "relations.json"


class StoreFormatError(KGError):
    """A directory that is not a (complete, supported) kgreason store."""


def hash_many(strings: Iterable[str]) -> np.ndarray:
    """Stable 64-bit blake2b hash of each string (Python's hash() is salted per process, so it
    cannot be stored); the digests are read as little-endian uint64 in one go."""
    return hash_bytes(s.encode() for s in strings)


def hash_bytes(encoded: Iterable[bytes], person: bytes = b"") -> np.ndarray:
    """`hash_many` of strings already UTF-8 encoded; another `person` gives an independent
    hash (the name-index build pairs two to tell distinct strings apart)."""
    b2 = hashlib.blake2b
    digests = b"".join([b2(b, digest_size=8, person=person).digest() for b in encoded])
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


def ranges(starts: np.ndarray, counts: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Concatenation of arange(s, s + c) for each (s, c), vectorised, as one int64 array
    (`out`, of the total's length, when given). Filled by a cumulative sum of steps in
    place: the repeat / arange / add form built three arrays of the total's length, and
    fresh pages cost more than the arithmetic (measured 1.1-14x slower, except for runs of
    one or two rows, where it is 1.3x faster)."""
    counts = np.asarray(counts, dtype=np.int64)
    nz = np.flatnonzero(counts)
    s, c = np.asarray(starts, dtype=np.int64)[nz], counts[nz]
    total = int(c.sum())
    if out is None:
        out = np.empty(total, dtype=np.int64)
    if total:
        out.fill(1)
        out[0] = s[0]
        out[np.cumsum(c[:-1])] = s[1:] - s[:-1] - c[:-1] + 1  # where each run begins
        np.cumsum(out, out=out)
    return out


def load_array(directory: Path, name: str) -> np.ndarray:
    path = directory / f"{name}.npy"
    try:
        # a plain ndarray view of the memmap: same pages, without np.memmap's per-index cost
        return np.load(path, mmap_mode="r").view(np.ndarray)
    except (OSError, ValueError) as e:
        raise StoreFormatError(f"{directory}: cannot open {path.name}: {e}") from e


def save_array(directory: Path, name: str, arr: np.ndarray) -> None:
    np.save(directory / f"{name}.npy", np.ascontiguousarray(arr), allow_pickle=False)


#: Below this many strings, slicing them one by one is cheaper than the vectorised pass.
SMALL = 8
#: Byte joining decoded strings; a batch that contains it is decoded string by string.
SEP = 0


def decode_slices(blob: np.ndarray, off: np.ndarray, ids: np.ndarray) -> list[str]:
    """Strings blob[off[i]:off[i+1]] (UTF-8) for each id: one gather, one decode, one split."""
    ids = np.asarray(ids, dtype=np.int64)
    starts = np.asarray(off[ids], dtype=np.int64)
    ends = np.asarray(off[ids + 1], dtype=np.int64)
    if len(ids) > SMALL and len(blob):
        lens = ends - starts
        # each string plus the byte after it (clipped at the blob's end), which becomes
        # the separator: one gather for the whole batch
        idx = np.minimum(ranges(starts, lens + 1), len(blob) - 1)
        buf = np.asarray(blob[idx])
        seps = np.cumsum(lens + 1) - 1
        # usable only if no string holds the separator byte itself
        if np.count_nonzero(buf == SEP) == np.count_nonzero(buf[seps] == SEP):
            buf[seps] = SEP
            return buf[:-1].tobytes().decode().split(chr(SEP))
    return [
        blob[a:b].tobytes().decode() for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
    ]


class StringTable:
    """Strings i = blob[off[i]:off[i+1]] (UTF-8); random access without loading the table."""

    def __init__(self, blob: np.ndarray, off: np.ndarray):
        self._blob = blob
        self._off = off

    @classmethod
    def open(cls, directory: Path, stem: str) -> StringTable:
        return cls(load_array(directory, f"{stem}.blob"), load_array(directory, f"{stem}.off"))

    @classmethod
    def of(cls, strings: Sequence[str]) -> StringTable:
        encoded = [s.encode() for s in strings]
        off = np.zeros(len(encoded) + 1, dtype=np.int64)
        if encoded:
            np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=off[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), off)

    def save(self, directory: Path, stem: str) -> None:
        save_array(directory, f"{stem}.blob", self._blob)
        save_array(directory, f"{stem}.off", self._off)

    def encoded(self, a: int, b: int) -> list[bytes]:
        """Strings a..b-1 as UTF-8 bytes: the build's blockwise passes hash and sort
        these without decoding the whole table."""
        off = self._off[a : b + 1].tolist()
        buf = self._blob[off[0] : off[-1]].tobytes() if off else b""
        o = off[0] if off else 0
        return [buf[x - o : y - o] for x, y in itertools.pairwise(off)]

    def strings(self, a: int, b: int) -> list[str]:
        return [x.decode() for x in self.encoded(a, b)]

    def slab(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """(the bytes of strings a..b-1, their offsets into those bytes: b - a + 1 values)."""
        off = np.asarray(self._off[a : b + 1], dtype=np.int64)
        return np.asarray(self._blob[off[0] : off[-1]]), off - off[0]

    def many_encoded(self, ids: Sequence[int]) -> list[bytes]:
        off = self._off
        return [self._blob[off[i] : off[i + 1]].tobytes() for i in ids]

    def __len__(self) -> int:
        return len(self._off) - 1

    def __getitem__(self, i: int) -> str:
        return self._blob[self._off[i] : self._off[i + 1]].tobytes().decode()

    def many(self, ids: Sequence[int] | np.ndarray) -> list[str]:
        return decode_slices(self._blob, self._off, np.asarray(ids, dtype=np.int64))

    def all(self) -> list[str]:
        return self.many(np.arange(len(self), dtype=np.int64))


def write_strings(directory: Path, stem: str, strings: Sequence[str]) -> None:
    StringTable.of(strings).save(directory, stem)


class HashIndex:
    """Sorted 64-bit hashes -> values; equal hashes form a run (collisions and duplicates),
    so callers verify candidates against the real strings."""

    def __init__(self, hashes: np.ndarray, values: np.ndarray):
        self._h = hashes
        self._v = values

    @classmethod
    def open(cls, directory: Path, stem: str) -> HashIndex:
        return cls(load_array(directory, f"{stem}.hash"), load_array(directory, f"{stem}.val"))

    def runs(self, strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi): the candidates of strings[i] are values lo[i]:hi[i] (see `value`)."""
        q = hash_many(strings)
        return np.searchsorted(self._h, q, "left"), np.searchsorted(self._h, q, "right")

    def value(self, pos: np.ndarray) -> np.ndarray:
        return np.asarray(self._v[pos], dtype=np.int64)

    def candidates(self, strings: Sequence[str]) -> list[np.ndarray]:
        lo, hi = self.runs(strings)
        return [np.asarray(self._v[a:b]) for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]


def write_hash_index(directory: Path, stem: str, hashes: np.ndarray, values: np.ndarray) -> None:
    order = np.argsort(hashes, kind="stable")
    save_array(directory, f"{stem}.hash", hashes[order])
    save_array(directory, f"{stem}.val", values[order].astype(np.int32))


@dataclass
class Manifest:
    format_version: int
    fingerprint: str
    counts: dict[str, int]
    sources: list[dict[str, object]]
    has_names: bool
    #: explicit inverse relation pairs found at build time (kgreason.kg.inverses)
    inverse_relations: list[dict[str, object]] = field(default_factory=list)

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        path = directory / MANIFEST
        if not path.is_file():
            raise StoreFormatError(f"{directory}: not a kgreason store (no {MANIFEST})")
        try:
            data = json.loads(path.read_text())
            m = cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})
        except (ValueError, KeyError, TypeError) as e:
            raise StoreFormatError(f"{path}: unreadable manifest: {e}") from e
        if m.format_version != FORMAT_VERSION:
            raise StoreFormatError(
                f"{directory}: store format {m.format_version}, this kgreason reads "
                f"{FORMAT_VERSION}; rebuild it with `kgreason kg build`"
            )
        return m

    def write(self, directory: Path) -> None:
        data = {k: getattr(self, k) for k in self.__dataclass_fields__}
        (directory / MANIFEST).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def fingerprint_files(directory: Path, names: Sequence[str]) -> str:
    """Content hash over the canonical data files, in a fixed order."""
    h = hashlib.sha256()
    for name in names:
        h.update(name.encode() + b"\0")
        with open(directory / name, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return "store:" + h.hexdigest()[:32]
