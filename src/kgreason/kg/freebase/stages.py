"""The stages of a dump build, each over run files in the work directory and each
bounded by the memory budget rather than by the dump:

1. parse: chunks of kept edges (fixed-width keys, relation ids) and names, each with its
   sorted key vocabulary;
2. keys: the vocabularies merged into one sorted key table; a node's id is its rank, the
   order the store numbers nodes in (store/build._key_order);
3. map: each chunk's keys turned into ids and its rows sent to head-range buckets;
4. fwd: per bucket, duplicates dropped (first occurrence kept) and rows ordered by head,
   then file order: the forward CSR; rows go on to tail-range buckets;
5. rev: per bucket, rows ordered by tail, then file order: the reverse CSR;
6. labels: per bucket, each node's name chosen (rdf.py's order) or its key.

Every stage checkpoints after each unit (chunk or bucket) with the sizes of the files it
appends to; a resumed stage first truncates them back (runs.restore).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from kgreason.kg.freebase.parse import KEY, KEY_WIDTH, Parsed
from kgreason.kg.freebase.state import BuildState
from kgreason.kg.store import runs

#: bytes of budget per row held: a parse chunk (keys, names, sort and unique temporaries;
#: measured ~290 B/row at 10M lines, so a chunk fills ~3/4 of the budget), and a
#: bucket (four id columns plus the lexsort's index arrays)
CHUNK_ROW_BYTES = 400
BUCKET_ROW_BYTES = 128
Tick = Callable[[str, int, int], None]


def chunk_rows(memory: int) -> int:
    return max(1 << 12, memory // CHUNK_ROW_BYTES)


def key_block(memory: int, runs_open: int = 1) -> int:
    return max(1 << 12, memory // (8 * KEY_WIDTH * max(runs_open, 1)))


def id_dtype(state: BuildState) -> np.dtype:
    big = max(state.entities, len(state.relations), state.rows)
    return np.dtype(np.int32 if big < 2**31 else np.int64)


def spill(work: Path, index: int, parsed: list[Parsed]) -> dict[str, int]:
    """Write one parse chunk; names are resolved within the chunk (the best per key)."""
    h = np.concatenate([p.heads for p in parsed]) if parsed else np.zeros(0, KEY)
    t = np.concatenate([p.tails for p in parsed]) if parsed else np.zeros(0, KEY)
    r = np.concatenate([p.rels for p in parsed]) if parsed else np.zeros(0, np.int64)
    best: dict[bytes, tuple[int, str]] = {}
    for p in parsed:
        for key, rank, value in p.names:
            cand = (rank, value)
            old = best.get(key)
            if old is None or cand < old:
                best[key] = cand
    nkeys = sorted(best)
    nk = np.array(nkeys, dtype=KEY)
    base = work / f"c{index:05d}"
    runs.write(base.with_suffix(".h"), h)
    runs.write(base.with_suffix(".t"), t)
    runs.write(base.with_suffix(".r"), r.astype(np.int32))
    runs.write(base.with_suffix(".nk"), nk)
    runs.write(base.with_suffix(".nr"), np.array([best[k][0] for k in nkeys], dtype=np.uint8))
    encoded = [best[k][1].encode() for k in nkeys]
    runs.write(base.with_suffix(".nl"), np.array([len(b) for b in encoded], dtype=np.int64))
    base.with_suffix(".nv").write_bytes(b"".join(encoded))
    runs.write(base.with_suffix(".v"), runs.unique_sorted(np.concatenate([h, t, nk])))
    return {"rows": len(h), "names": len(nkeys)}


def merge_keys(work: Path, state: BuildState, memory: int) -> int:
    chunks = [work / f"c{i:05d}.v" for i in range(len(state.chunks))]
    out = work / "keys.S"
    out.unlink(missing_ok=True)
    n = 0
    for block in runs.merge_unique(chunks, KEY, key_block(memory, len(chunks) + 2)):
        runs.append(out, block)
        n += len(block)
    return n


def bucket_files(work: Path, kind: str) -> list[Path]:
    return sorted(work.glob(f"{kind}-*"))


def _bucket(kind: str, b: int, column: str, work: Path) -> Path:
    return work / f"{kind}-{b:05d}.{column}"


def map_chunk(work: Path, state: BuildState, c: int, memory: int) -> None:
    """Ids for chunk c's keys; its rows to head buckets, its names to id buckets."""
    base = work / f"c{c:05d}"
    vocab = runs.read(base.with_suffix(".v"), KEY)
    gid = runs.lookup(work / "keys.S", KEY, vocab, key_block(memory))
    h = gid[np.searchsorted(vocab, runs.read(base.with_suffix(".h"), KEY))]
    t = gid[np.searchsorted(vocab, runs.read(base.with_suffix(".t"), KEY))]
    r = runs.read(base.with_suffix(".r"), np.int32)
    first = sum(ch["rows"] for ch in state.chunks[:c])
    seq = np.arange(first, first + len(h), dtype=np.int64)
    idt = id_dtype(state)
    cols = {"h": h.astype(idt), "r": r, "t": t.astype(idt), "s": seq}
    _scatter(work, "fb", h // state.width, cols)
    ids = gid[np.searchsorted(vocab, runs.read(base.with_suffix(".nk"), KEY))]
    lens = runs.read(base.with_suffix(".nl"), np.int64)
    blob = base.with_suffix(".nv").read_bytes()
    bucket = ids // state.width
    order = np.argsort(bucket, kind="stable")
    starts = np.concatenate([[0], np.cumsum(lens)])
    bounds = np.searchsorted(bucket[order], np.arange(state.buckets + 1))
    ranks = runs.read(base.with_suffix(".nr"), np.uint8)
    for b in range(state.buckets):
        sel = order[bounds[b] : bounds[b + 1]]
        if len(sel) == 0:
            continue
        runs.append(_bucket("nb", b, "id", work), ids[sel])
        runs.append(_bucket("nb", b, "rank", work), ranks[sel])
        runs.append(_bucket("nb", b, "len", work), lens[sel])
        runs.append_bytes(
            _bucket("nb", b, "val", work),
            b"".join(blob[starts[i] : starts[i + 1]] for i in sel.tolist()),
        )


def _scatter(work: Path, kind: str, bucket: np.ndarray, cols: dict[str, np.ndarray]) -> None:
    """Append each column's rows to their bucket's file, keeping the rows' order."""
    order = np.argsort(bucket, kind="stable")
    nb = int(bucket.max()) + 1 if len(bucket) else 0
    bounds = np.searchsorted(bucket[order], np.arange(nb + 1))
    for b in range(nb):
        sel = order[bounds[b] : bounds[b + 1]]
        if len(sel):
            for name, col in cols.items():
                runs.append(_bucket(kind, b, name, work), col[sel])


def fwd_bucket(work: Path, state: BuildState, b: int, out: dict[str, runs.NpyRaw]) -> None:
    """Bucket b's distinct rows, by head then file order: appended to the forward CSR;
    each row, with its edge id, sent on to the tail buckets."""
    idt = id_dtype(state)
    h = runs.read(_bucket("fb", b, "h", work), idt)
    r = runs.read(_bucket("fb", b, "r", work), np.int32)
    t = runs.read(_bucket("fb", b, "t", work), idt)
    s = runs.read(_bucket("fb", b, "s", work), np.int64)
    o = np.lexsort((s, t, r, h))
    same = np.zeros(len(o), dtype=bool)
    if len(o) > 1:
        same[1:] = (h[o[1:]] == h[o[:-1]]) & (r[o[1:]] == r[o[:-1]]) & (t[o[1:]] == t[o[:-1]])
    kept = o[~same]  # the first occurrence (smallest seq) of each distinct triple
    kept = kept[np.lexsort((s[kept], h[kept]))]
    h, r, t, s = h[kept], r[kept], t[kept], s[kept]
    lo = b * state.width
    hi = min(state.entities, lo + state.width)
    out["fwd.counts"].append(np.bincount(h - lo, minlength=hi - lo))
    out["fwd.rel"].append(r)
    out["fwd.dst"].append(t)
    eid = np.arange(state.edges, state.edges + len(h), dtype=np.int64)
    state.edges += len(h)
    cols = {"t": t, "r": r, "h": h, "e": eid.astype(idt), "s": s}
    _scatter(work, "rb", t // state.width, cols)


def rev_bucket(work: Path, state: BuildState, b: int, out: dict[str, runs.NpyRaw]) -> None:
    idt = id_dtype(state)
    t = runs.read(_bucket("rb", b, "t", work), idt)
    s = runs.read(_bucket("rb", b, "s", work), np.int64)
    o = np.lexsort((s, t))
    lo = b * state.width
    hi = min(state.entities, lo + state.width)
    out["rev.counts"].append(np.bincount(t[o] - lo, minlength=hi - lo))
    out["rev.rel"].append(runs.read(_bucket("rb", b, "r", work), np.int32)[o])
    out["rev.src"].append(runs.read(_bucket("rb", b, "h", work), idt)[o])
    out["rev.eid"].append(runs.read(_bucket("rb", b, "e", work), idt)[o])


def label_bucket(work: Path, state: BuildState, b: int, out: dict[str, runs.NpyRaw]) -> None:
    """Each node of bucket b: its best name (rank, then the smallest value), else its key;
    a node without a name is unnamed (every key is a MID or GID)."""
    lo = b * state.width
    hi = min(state.entities, lo + state.width)
    ids = runs.read(_bucket("nb", b, "id", work), np.int64)
    ranks = runs.read(_bucket("nb", b, "rank", work), np.uint8)
    lens = runs.read(_bucket("nb", b, "len", work), np.int64)
    blob = _bucket("nb", b, "val", work).read_bytes() if len(ids) else b""
    starts = np.concatenate([[0], np.cumsum(lens)]).tolist()
    best: dict[int, tuple[int, str]] = {}
    for j, (i, rank) in enumerate(zip(ids.tolist(), ranks.tolist(), strict=True)):
        cand = (rank, blob[starts[j] : starts[j + 1]].decode())
        old = best.get(i)
        if old is None or cand < old:
            best[i] = cand
    keys = runs.read(work / "keys.S", KEY, lo, hi - lo)
    labels = [best[i][1] if i in best else k.decode() for i, k in enumerate(keys.tolist(), lo)]
    encoded = [x.encode() for x in labels]
    out["labels.len"].append(np.array([len(x) for x in encoded], dtype=np.int64))
    runs.append_bytes(out["labels.blob"].raw, b"".join(encoded))
    out["unnamed"].append(np.array([i not in best for i in range(lo, hi)], dtype=np.uint8))
