"""The store's arrays from a dump build's run files, in blocks: the CSR index pointers from
per-node counts, the key table without its fixed-width padding, and the `.npy` headers
written over the reserved bytes of the appended outputs (runs.NpyRaw)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kgreason.kg.freebase import stages
from kgreason.kg.freebase.parse import KEY, KEY_WIDTH
from kgreason.kg.freebase.state import BuildState
from kgreason.kg.store import runs


def assemble(work: Path, store: Path, state: BuildState, memory: int) -> dict[str, int]:
    """Write every array file but the name indexes; returns the unnamed and isolated counts."""
    idt = stages.id_dtype(state)
    n = state.entities
    # ~40 bytes per node of a block's arrays here; the key table's ~100 (keys 24 wide)
    block = max(1 << 16, memory // 128)
    for name, dt in (
        ("fwd.rel", idt),
        ("fwd.dst", idt),
        ("rev.rel", idt),
        ("rev.src", idt),
        ("rev.eid", idt),
        ("unnamed", np.uint8),
    ):
        raw = runs.NpyRaw(work / f"{name}.npy", dt)
        if raw.raw.exists():  # already moved by an earlier, interrupted finish
            raw.finish(store)
    isolated = 0
    for side in ("fwd", "rev"):
        counts = work / f"{side}.counts.npy.raw"
        ptr = runs.NpyRaw(work / f"{side}.indptr.npy", np.int64)
        ptr.raw.unlink(missing_ok=True)
        ptr.start()
        ptr.append(np.zeros(1, np.int64))
        total = 0
        for a in range(0, n, block):
            c = runs.read(counts, np.int64, runs.HEADER // 8 + a, min(block, n - a))
            ptr.append(total + np.cumsum(c))
            total += int(c.sum())
        ptr.finish(store)
    unnamed = 0
    for a in range(0, n, block):  # read, not mapped: a mapping's pages would count as held
        m = min(block, n - a)
        fwd, rev = (
            runs.read(work / f"{side}.counts.npy.raw", np.int64, runs.HEADER // 8 + a, m)
            for side in ("fwd", "rev")
        )
        isolated += int(np.count_nonzero((fwd + rev) == 0))
        part = runs.read(store / "unnamed.npy", np.uint8, runs.HEADER + a, m)
        unnamed += int(np.count_nonzero(part))
    _keys(work, store, n, max(1 << 16, memory // 512))
    return {"unnamed": unnamed, "isolated": isolated}


def _keys(work: Path, store: Path, n: int, block: int) -> None:
    blob = runs.NpyRaw(work / "keys.blob.npy", np.uint8)
    off = runs.NpyRaw(work / "keys.off.npy", np.int64)
    rank = runs.NpyRaw(work / "keys.rank.npy", np.int32 if n < 2**31 else np.int64)
    for r in (blob, off, rank):
        r.raw.unlink(missing_ok=True)
        r.start()
    off.append(np.zeros(1, np.int64))
    total = 0
    for a in range(0, n, block):
        keys = runs.read(work / "keys.S", KEY, a, min(block, n - a))
        lens = np.char.str_len(keys).astype(np.int64)
        grid = keys.view(np.uint8).reshape(-1, KEY_WIDTH)
        blob.append(grid[np.arange(KEY_WIDTH) < lens[:, None]])
        off.append(total + np.cumsum(lens))
        total += int(lens.sum())
        rank.append(np.arange(a, a + len(keys)))
    for r in (blob, off, rank):
        r.finish(store)
