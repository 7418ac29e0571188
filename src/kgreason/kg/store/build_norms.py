"""The normalised-name tables of the name indexes and the sorted-name order, built with
external sorts (external.Sorter) so that no step holds an array per entity: memory is set
by the budget's record count and the block of labels worked on, not by the KG's size."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from kgreason.kg.ranking import normalize_name
from kgreason.kg.store import runs
from kgreason.kg.store.external import Gather, Sorter, StringFile
from kgreason.kg.store.format import StringTable, hash_bytes, ranges

Table = StringTable | StringFile
#: per-row files of the first pass (row order): what each norm's first row contributes
ROW_FILES = {"h1": np.uint64, "start": np.int64, "len": np.int64, "chars": np.int32}
NORM_OUTPUTS = {
    "norm_nodes.val": np.int32,
    "norm_nodes.indptr": np.int64,
    "norms.blob": np.uint8,
    "norms.off": np.int64,
    "norms.len": np.int32,
}


def write_norms(directory: Path, labels: Table, tmp: Path, block: int, records: int) -> Sorter:
    """norms.blob/off/len and norm_nodes.indptr/val into `directory`; returns the norms'
    (hash, id) records for their hash index.

    Norm ids follow first appearance in node order, as a dict.setdefault pass would number
    them. Distinct norms are told apart by two independent 64-bit hashes: (h1, h2, row)
    records sorted give each row its group's first row; (first, row) records sorted give
    norm_nodes in norm-id order, and the firsts, ascending, are the norms in id order."""
    groups = Sorter(tmp, "groups", ("h1", "h2", "row"), records, rising=True)
    _first_pass(labels, tmp, block, groups)
    pairs = Sorter(tmp, "pairs", ("first", "row"), records)
    carry: tuple[int, int, int] | None = None
    for blk in groups.sorted():
        h1, h2, row = blk["h1"], blk["h2"], blk["row"]
        new = np.ones(len(row), dtype=bool)
        new[1:] = (h1[1:] != h1[:-1]) | (h2[1:] != h2[:-1])
        if carry is not None and (int(h1[0]), int(h2[0])) == carry[:2]:
            new[0] = False
        start = np.maximum.accumulate(np.where(new, np.arange(len(row)), -1))
        first = np.where(start >= 0, row[np.maximum(start, 0)], carry[2] if carry else -1)
        carry = (int(h1[-1]), int(h2[-1]), int(first[-1]))
        pairs.add(first=first, row=row)
        del blk, h1, h2, row, new, start, first  # not held while the next block merges
    return _write_groups(directory, tmp, pairs, block, records)


def _first_pass(labels: Table, tmp: Path, block: int, groups: Sorter) -> None:
    """Each label's norm: its bytes to a scratch file, its row data to ROW_FILES, its
    (h1, h2, row) record to `groups`."""
    n = len(labels)
    for name in (*ROW_FILES, "blob"):
        (tmp / f"rows.{name}").unlink(missing_ok=True)
    done = 0
    for a in range(0, n, block):
        norms = [normalize_name(s) for s in labels.strings(a, min(a + block, n))]
        enc = [s.encode() for s in norms]
        h1 = hash_bytes(enc)
        lens = np.fromiter(map(len, enc), np.int64, len(enc))
        cols = {
            "h1": h1,
            "start": done + np.cumsum(lens) - lens,
            "len": lens,
            "chars": np.fromiter(map(len, norms), np.int32, len(norms)),
        }
        for name, col in cols.items():
            runs.append(tmp / f"rows.{name}", col)
        runs.append_bytes(tmp / "rows.blob", b"".join(enc))
        done += int(lens.sum())
        row = np.arange(a, a + len(enc), dtype=np.int64)
        groups.add(h1=h1, h2=hash_bytes(enc, person=b"kgreason-norm"), row=row)
    for name in (*ROW_FILES, "blob"):
        (tmp / f"rows.{name}").touch()


def _write_groups(directory: Path, tmp: Path, pairs: Sorter, block: int, records: int) -> Sorter:
    out = {name: runs.NpyRaw(tmp / f"{name}.npy", dt) for name, dt in NORM_OUTPUTS.items()}
    for o in out.values():
        o.raw.unlink(missing_ok=True)
        o.start()
    rows = {name: Gather(tmp / f"rows.{name}", dt) for name, dt in ROW_FILES.items()}
    blob = Gather(tmp / "rows.blob", np.uint8, window=1 << 22)
    hashes = Sorter(tmp, "norm-hashes", ("h", "v"), records, rising=True)
    out["norms.off"].append(np.zeros(1, np.int64))
    done, last, nid, nbytes = 0, -1, 0, 0
    for blk in pairs.sorted():
        first, row = blk["first"], blk["row"]
        new = np.ones(len(row), dtype=bool)
        new[1:] = first[1:] != first[:-1]
        new[0] = int(first[0]) != last
        out["norm_nodes.val"].append(row)
        out["norm_nodes.indptr"].append(done + np.flatnonzero(new))
        done, last = done + len(row), int(first[-1])
        firsts = first[new]
        del first, row, new, blk
        for a in range(0, len(firsts), block):
            f = firsts[a : a + block]
            lens = rows["len"].take(f)
            out["norms.len"].append(rows["chars"].take(f))
            out["norms.off"].append(nbytes + np.cumsum(lens))
            out["norms.blob"].append(blob.take(ranges(rows["start"].take(f), lens)))
            hashes.add(h=rows["h1"].take(f), v=np.arange(nid, nid + len(f), dtype=np.int64))
            nbytes += int(lens.sum())
            nid += len(f)
    out["norm_nodes.indptr"].append(np.array([done], dtype=np.int64))
    for o in out.values():
        o.finish(directory)
    for name in (*ROW_FILES, "blob"):
        (tmp / f"rows.{name}").unlink(missing_ok=True)
    return hashes


def string_order_blocks(table: Table, tmp: Path, block: int, records: int) -> Iterator[np.ndarray]:
    """Indices of the table's strings in code-point order (= UTF-8 byte order), in blocks:
    (first 16 bytes as two big-endian integers, index) records sorted, then the strings
    that tie on those 16 bytes sorted among themselves by their full bytes. A tie group
    that the merge's blocks cut is carried into the next block."""
    n = len(table)
    prefixes = Sorter(tmp, "prefixes", ("hi", "lo", "id"), records, rising=True)
    cols = np.arange(16)
    for a in range(0, n, block):
        b = min(a + block, n)
        blob, off = table.slab(a, b)
        starts = off[:-1]
        take = np.minimum(off[1:] - starts, 16)
        mask = cols < take[:, None]
        pref = np.zeros((b - a, 16), dtype=np.uint8)
        pref[mask] = blob[(starts[:, None] + cols)[mask]]
        key = pref.view(">u8").astype(np.uint64)  # big-endian: integer order = byte order
        prefixes.add(hi=key[:, 0].copy(), lo=key[:, 1].copy(), id=np.arange(a, b, dtype=np.int64))
    carry: dict[str, np.ndarray] | None = None
    for blk in prefixes.sorted():
        if carry is not None:
            blk = {c: np.concatenate([carry[c], blk[c]]) for c in blk}
        hi, lo = blk["hi"], blk["lo"]
        breaks = np.flatnonzero((hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1]))
        keep = int(breaks[-1]) + 1 if len(breaks) else 0
        carry = {c: a[keep:] for c, a in blk.items()}
        if keep:
            yield _break_ties(table, {c: a[:keep] for c, a in blk.items()})
    if carry is not None and len(carry["id"]):
        yield _break_ties(table, carry)


def _break_ties(table: Table, blk: dict[str, np.ndarray]) -> np.ndarray:
    hi, lo, order = blk["hi"], blk["lo"], blk["id"].copy()
    tie = (hi[1:] == hi[:-1]) & (lo[1:] == lo[:-1])
    edge = np.diff(np.concatenate([[0], tie.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edge == 1).tolist(), np.flatnonzero(edge == -1).tolist()
    if not starts:
        return order
    members = np.unique(
        np.concatenate([order[s : e + 1] for s, e in zip(starts, ends, strict=True)])
    )
    text = dict(zip(members.tolist(), table.many_encoded(members.tolist()), strict=True))
    for s, e in zip(starts, ends, strict=True):
        group = order[s : e + 1].tolist()
        group.sort(key=text.__getitem__)
        order[s : e + 1] = group
    return order
