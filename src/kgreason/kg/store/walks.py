"""Walks a subset store replays (written by `kgreason kg subset`, eval/kg_subset.py).

A bounded walk's cut depends on edges it did not take: which of a hub's rows came first,
how many new edges a hop held. A subset store holds only the union of its questions' walks,
so walking it again cuts elsewhere: other questions' edges sit between the rows a walk took,
and totals shrink. So the subset records each question's walk as the full store made it
(edge ids in discovery order, which side of each edge read it, what the cut said) and
`pog/subgraph.walk_subgraph` replays a recorded walk when the seeds and every setting that
shapes a walk match (`WalkKey`); any other walk runs live on the subset's own edges.

Only walks a bound cut are recorded: an uncut walk is the full D-hop neighbourhood, which
the subset holds whole, so walking it live gives the same edges in the same order.

Files: `walks.json` (one entry per walk: its key, edge count, the cut's figures and where
its bytes lie) and `walks.bin`: per walk, its edge ids in the subset's numbering as
zlib-compressed differences (int32, or int64 past 2^31 edges), then whether each edge was
read from its tail as zlib-compressed bits. A 200k-edge walk on a hub-heavy KG took
~1.1 bytes an edge this way (5 as plain arrays: 998 MB for 1,000 questions at 30M
lines), and decompresses in about a millisecond.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kgreason.kg.store.format import StoreFormatError
from kgreason.kg.store.walk import Expansion

WALKS = "walks.json"
WALKS_VERSION = 2
WALKS_BIN = "walks.bin"
#: edges up to which a replaying subset keeps a head-of-edge array in memory (256 MB)
HEADS_MAX = 1 << 26
#: Expansion's scalar fields a replay restores (group_table is not kept: its text is)
FIGURES = (
    "truncated",
    "reason",
    "cut_hop",
    "unread_edges",
    "left_out_relations",
    "left_out_entities",
    "left_out_exact",
    "unread_rows",
)


@dataclass(frozen=True)
class WalkKey:
    """What decides a walk: the seed keys in order, depth, pog.max_subgraph_triples (None
    is no cap), pog.subgraph_bound and the KG's noise prefixes."""

    seeds: tuple[str, ...]
    depth: int
    cap: int | None
    bound: str
    noise: tuple[str, ...]

    def text(self) -> str:
        return json.dumps([list(self.seeds), self.depth, self.cap, self.bound, list(self.noise)])


class WalkSpool:
    """Walks being recorded, spooled to `directory` as they come (raw edge ids and read
    sides; the entries in memory), so a question set's walks, which overlap on hubs and can
    sum to far more than the subset's edges, never sit in memory together."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.entries: dict[str, dict] = {}
        self.count = 0
        self._eid = open(directory / "spool.eid", "wb")  # noqa: SIM115 (closed by close())
        self._inn = open(directory / "spool.inn", "wb")  # noqa: SIM115

    def add(self, key: WalkKey, res: Expansion, detail: str) -> None:
        """Record `res` under `key` when a bound cut it (a key seen before keeps its first
        walk: the same)."""
        if res.rows is None:
            raise ValueError("a walk without its rows cannot be recorded")
        k = key.text()
        if k in self.entries or not res.truncated:
            return
        eids = np.asarray(res.eids, np.int64)
        self._eid.write(eids.tobytes())
        self._inn.write(np.asarray(res.rows[3], bool).tobytes())
        figures = {f: getattr(res, f) for f in FIGURES}
        self.entries[k] = {
            "key": json.loads(k),
            "count": len(eids),
            "figures": figures,
            "detail": detail,
            "spooled": self.count,
        }
        self.count += len(eids)

    def close(self) -> None:
        self._eid.close()
        self._inn.close()

    def write(self, out: Path, eid_map: np.ndarray) -> None:
        """Write the walks into the store `out`, their edge ids renumbered through
        `eid_map` (the sorted edge ids of the walked store that the subset holds, in the
        subset's edge order), one walk at a time."""
        self.close()
        dtype = np.int32 if len(eid_map) < 2**31 else np.int64
        entries = []
        with open(out / WALKS_BIN, "wb") as blob:
            src = np.memmap(self.directory / "spool.eid", np.int64, "r") if self.count else None
            side = np.memmap(self.directory / "spool.inn", np.bool_, "r") if self.count else None
            at = 0
            for entry in self.entries.values():
                a = entry.pop("spooled")
                b = a + entry["count"]
                part = np.asarray(src[a:b]) if src is not None else np.zeros(0, np.int64)
                sub = np.searchsorted(eid_map, part)
                if len(sub) and (sub.max() >= len(eid_map) or (eid_map[sub] != part).any()):
                    raise ValueError("a recorded walk holds an edge the subset does not")
                eid_z = zlib.compress(np.diff(sub, prepend=0).astype(dtype).tobytes(), 1)
                read = np.asarray(side[a:b]) if side is not None else np.zeros(0, bool)
                inn_z = zlib.compress(np.packbits(read).tobytes(), 1)
                blob.write(eid_z)
                blob.write(inn_z)
                entry.update(at=at, eid_bytes=len(eid_z), inn_bytes=len(inn_z))
                entry["dtype"] = np.dtype(dtype).name
                at += len(eid_z) + len(inn_z)
                entries.append(entry)
            del src, side
        (out / WALKS).write_text(json.dumps({"version": WALKS_VERSION, "walks": entries}))


class Walks:
    """A store's recorded walks (none for a store that is not a subset)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._index: dict[str, dict] | None = None
        self._heads: np.ndarray | None = None

    def _entries(self) -> dict[str, dict]:
        if self._index is None:
            path = self.directory / WALKS
            self._index = {}
            if path.exists():
                try:
                    data = json.loads(path.read_text())
                    if data.get("version") != WALKS_VERSION:
                        raise ValueError(
                            f"format {data.get('version')!r}, this kgreason reads "
                            f"{WALKS_VERSION}: cut the subset again (kgreason kg subset)"
                        )
                    self._index = {json.dumps(e["key"]): e for e in data["walks"]}
                except (OSError, ValueError, KeyError, TypeError) as e:
                    raise StoreFormatError(f"{path}: unreadable recorded walks: {e}") from e
        return self._index

    def __len__(self) -> int:
        return len(self._entries())

    def largest(self) -> int:
        """Edges of the largest recorded walk (0 without walks): a subset's questions get
        subgraphs this large however small the subset is."""
        return max((int(e["count"]) for e in self._entries().values()), default=0)

    def replay(self, graph, key: WalkKey) -> tuple[Expansion, str] | None:
        """The recorded walk for `key` on `graph` (the subset's CSRGraph) and its cut
        text, or None when none was recorded."""
        entry = self._entries().get(key.text())
        if entry is None:
            return None
        n = int(entry["count"])
        try:
            with open(self.directory / WALKS_BIN, "rb") as f:
                f.seek(int(entry["at"]))
                eid_z = f.read(int(entry["eid_bytes"]))
                inn_z = f.read(int(entry["inn_bytes"]))
            diffs = np.frombuffer(zlib.decompress(eid_z), dtype=np.dtype(entry["dtype"]))
            eids = np.cumsum(diffs, dtype=np.int64)
            bits = np.frombuffer(zlib.decompress(inn_z), dtype=np.uint8)
            inn = np.unpackbits(bits, count=n).astype(bool) if n else np.zeros(0, bool)
        except (OSError, ValueError, TypeError, KeyError, zlib.error) as e:
            raise StoreFormatError(f"{self.directory}: unreadable recorded walks: {e}") from e
        if (
            len(eids) != n
            or len(inn) != n
            or (n and (eids.min() < 0 or eids.max() >= graph.n_edges))
        ):
            raise StoreFormatError(f"{self.directory}: recorded walks do not fit this store")
        h, r, t = self._triples(graph, eids)
        own, nbr = np.where(inn, t, h), np.where(inn, h, t)
        figures = {k: entry["figures"][k] for k in FIGURES}
        return Expansion(eids, rows=(own, nbr, r, inn), **figures), str(entry["detail"])

    def _triples(self, graph, eids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """graph.triples(eids), heads read from a head-of-edge array built on first use: a
        200k-edge walk's heads by binary search over the edge pointers took ~5 ms, half a
        replayed question's subgraph stage. Subsets only (a recorded walk's store), and
        at most HEADS_MAX edges (4 bytes each); past that, the binary search."""
        if graph.n_edges > HEADS_MAX:
            return graph.triples(eids)
        if self._heads is None or len(self._heads) != graph.n_edges:
            ptr = np.asarray(graph.fwd_ptr)
            self._heads = np.repeat(np.arange(len(ptr) - 1, dtype=np.int32), np.diff(ptr))
        return (
            self._heads[eids].astype(np.int64),
            np.asarray(graph.fwd_rel[eids]),
            np.asarray(graph.fwd_dst[eids]),
        )
