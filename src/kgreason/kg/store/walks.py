"""Walks a subset store replays (written by `kgreason kg subset`, eval/kg_subset.py).

A bounded walk's cut depends on edges it did not take: which of a hub's rows came first,
how many new edges a hop held. A subset store holds only the union of its questions' walks,
so walking it again cuts elsewhere: other questions' edges sit between the rows a walk took,
and totals shrink. So the subset records each question's walk as the full store made it
(edge ids in discovery order, which side of each edge read it, what the cut said) and
`pog/subgraph.walk_subgraph` replays a recorded walk when the seeds and every setting that
shapes a walk match (`WalkKey`); any other walk runs live on the subset's own edges.

Files: `walks.json` (one entry per walk: its key, offset, count and the cut's figures) and
`walks.eid.npy` / `walks.inn.npy` (all walks' edge ids in the subset's numbering, and
whether each was read from its tail), memory-mapped on first use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kgreason.kg.store.format import StoreFormatError
from kgreason.kg.store.walk import Expansion

WALKS = "walks.json"
WALKS_VERSION = 1
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
        """Record `res` under `key` (a key seen before keeps its first walk: the same)."""
        if res.rows is None:
            raise ValueError("a walk without its rows cannot be recorded")
        k = key.text()
        if k in self.entries:
            return
        eids = np.asarray(res.eids, np.int64)
        self._eid.write(eids.tobytes())
        self._inn.write(np.asarray(res.rows[3], bool).tobytes())
        figures = {f: getattr(res, f) for f in FIGURES}
        self.entries[k] = {
            "key": json.loads(k),
            "offset": self.count,
            "count": len(eids),
            "figures": figures,
            "detail": detail,
        }
        self.count += len(eids)

    def close(self) -> None:
        self._eid.close()
        self._inn.close()

    def write(self, out: Path, eid_map: np.ndarray, block: int = 1 << 22) -> None:
        """Write the walks into the store `out`, their edge ids renumbered through
        `eid_map` (the sorted edge ids of the walked store that the subset holds, in the
        subset's edge order), a block at a time."""
        self.close()
        dtype = np.int32 if len(eid_map) < 2**31 else np.int64
        eid = np.lib.format.open_memmap(out / "walks.eid.npy", "w+", dtype, (self.count,))
        inn = np.lib.format.open_memmap(out / "walks.inn.npy", "w+", np.bool_, (self.count,))
        if self.count:
            src = np.memmap(self.directory / "spool.eid", np.int64, "r")
            side = np.memmap(self.directory / "spool.inn", np.bool_, "r")
            for a in range(0, self.count, block):
                part = np.asarray(src[a : a + block])
                sub = np.searchsorted(eid_map, part)
                if sub.max() >= len(eid_map) or (eid_map[sub] != part).any():
                    raise ValueError("a recorded walk holds an edge the subset does not")
                eid[a : a + block] = sub
                inn[a : a + block] = side[a : a + block]
            del src, side
        eid.flush()
        inn.flush()
        del eid, inn
        entries = list(self.entries.values())
        (out / WALKS).write_text(json.dumps({"version": WALKS_VERSION, "walks": entries}))


class Walks:
    """A store's recorded walks (none for a store that is not a subset)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._index: dict[str, dict] | None = None

    def _entries(self) -> dict[str, dict]:
        if self._index is None:
            path = self.directory / WALKS
            self._index = {}
            if path.exists():
                try:
                    data = json.loads(path.read_text())
                    if data.get("version") != WALKS_VERSION:
                        raise ValueError(f"version {data.get('version')!r}")
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
        a, b = entry["offset"], entry["offset"] + entry["count"]
        try:
            eids = np.load(self.directory / "walks.eid.npy", mmap_mode="r")[a:b].astype(np.int64)
            inn = np.load(self.directory / "walks.inn.npy", mmap_mode="r")[a:b].astype(bool)
        except (OSError, ValueError) as e:
            raise StoreFormatError(f"{self.directory}: unreadable recorded walks: {e}") from e
        if len(eids) != b - a or len(inn) != b - a or (len(eids) and eids.max() >= graph.n_edges):
            raise StoreFormatError(f"{self.directory}: recorded walks do not fit this store")
        h, r, t = graph.triples(eids)
        own, nbr = np.where(inn, t, h), np.where(inn, h, t)
        figures = {k: entry["figures"][k] for k in FIGURES}
        return Expansion(eids, rows=(own, nbr, r, inn), **figures), str(entry["detail"])
