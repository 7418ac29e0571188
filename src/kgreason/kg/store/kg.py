"""`StoreKG`: the KnowledgeGraph interface over a built store directory.

Opening reads the manifest and the relation list and memory-maps the arrays; nothing is
loaded in full. Answers are identical to MemoryKG's on the same data (tests check it).
The async methods do not await anything: they are thin wrappers around the synchronous
`graph` (CSRGraph, numpy node ids) and `index` (NameIndex) that PoG may use directly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kgreason.kg.base import (
    Closeable,
    ClosedKG,
    EntityMatch,
    Neighbor,
    Subgraph,
    Triple,
    is_noise_relation,
)
from kgreason.kg.settings import DEFAULT_NOISE_PREFIXES
from kgreason.kg.store.format import RELATIONS, Manifest, StoreFormatError
from kgreason.kg.store.graph import CSRGraph
from kgreason.kg.store.materialize import (
    FrozenRows,
    collector_paused,
    decode_distinct,
    objects,
    pick,
)
from kgreason.kg.store.names import NameIndex
from kgreason.kg.store.swap import recover_if_idle
from kgreason.kg.store.walks import Walks

#: Neighbor.direction by `Edges.out` (False/True).
DIRECTIONS = ("head", "tail")


class StoreKG(Closeable):
    def __init__(self, path: Path | str, *, noise_prefixes: Sequence[str] = DEFAULT_NOISE_PREFIXES):
        self.path = Path(path)
        self.name = str(self.path)
        recover_if_idle(self.path)  # a build killed mid-swap left the store in DIR.old-*
        self.manifest = Manifest.read(self.path)
        try:
            self.relations: list[str] = json.loads((self.path / RELATIONS).read_text())
        except (OSError, ValueError) as e:
            raise StoreFormatError(f"{self.path}: unreadable {RELATIONS}: {e}") from e
        self._rel_id = {r: i for i, r in enumerate(self.relations)}
        self.noise_prefixes = tuple(noise_prefixes)
        noise = np.array(
            [is_noise_relation(r, self.noise_prefixes) for r in self.relations], dtype=bool
        )
        self.graph = CSRGraph(self.path, noise)
        self.index = NameIndex(self.path, self.manifest)
        #: rank of each relation name in sorted order (orders triples without comparing strings)
        self._rel_rank = np.empty(len(self.relations), dtype=np.int64)
        self._rel_rank[sorted(range(len(self.relations)), key=self.relations.__getitem__)] = (
            np.arange(len(self.relations))
        )
        self._rel_objects = objects(self.relations)
        self._dir_objects = objects(DIRECTIONS)
        self._triple_rows = FrozenRows(Triple)
        self._neighbor_rows = FrozenRows(Neighbor)
        #: the walks a subset store replays (kg/store/walks.py; none elsewhere)
        self.walks = Walks(self.path)

    def close(self) -> None:
        """Drop the memory maps (unmapped once no result still views them); later calls
        raise KGError naming the store."""
        self.graph = self.index = ClosedKG(self.name)  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StoreKG({self.name!r}, {self.manifest.counts.get('triples', 0)} triples)"

    # --- sync helpers -------------------------------------------------------------------
    def node_ids(self, keys: Sequence[str]) -> np.ndarray:
        """Node id per key (-1 = unknown): the entry point to the numpy fast path."""
        return self.index.lookup(keys)

    def triples_of(self, eids: np.ndarray, *, sort: bool = False) -> list[Triple]:
        """Triples of edge ids, in that order or sorted (as Triple's ordering sorts them)."""
        with collector_paused():
            return self._triples_of(eids, sort)

    def _triples_of(self, eids: np.ndarray, sort: bool) -> list[Triple]:
        eids = np.asarray(eids, dtype=np.int64)
        if sort:  # the order is re-derived below; ascending ids read the arrays in order
            eids = np.sort(eids)
        h, r, t = self.graph.triples(eids)
        strs, uniq, inv = decode_distinct(
            self.index.keys.many, np.concatenate([h, t]), self.graph.n_nodes
        )
        ih, it = inv[: len(h)], inv[len(h) :]
        if sort and len(eids) > 1:
            # keys are distinct, so (head, relation, tail) order = order of their ranks
            rank = self.index.key_order(uniq, strs)
            u, m = len(strs), max(len(self.relations), 1)
            if u * u * m < 2**62:
                order = np.argsort((rank[ih] * m + self._rel_rank[r]) * u + rank[it])
            else:
                order = np.lexsort((rank[it], self._rel_rank[r], rank[ih]))
            ih, r, it = ih[order], r[order], it[order]
        keys = objects(strs)
        return self._triple_rows(pick(keys, ih), pick(self._rel_objects, r), pick(keys, it))

    # --- KnowledgeGraph -----------------------------------------------------------------
    async def names(self, ids: Sequence[str]) -> dict[str, str]:
        ids = list(ids)
        nodes = self.index.lookup(ids)
        known = nodes >= 0
        shown = self.index.display(nodes[known])
        return dict(
            zip([i for i, k in zip(ids, known.tolist(), strict=True) if k], shown, strict=True)
        )

    async def neighbors(
        self, ids: Sequence[str], *, limit_per_entity: int | None = None
    ) -> dict[str, list[Neighbor]]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, list[Neighbor]] = {i: [] for i in ids}
        nodes = self.index.lookup(ids)
        known = np.flatnonzero(nodes >= 0)
        if len(known) == 0:
            return out
        ed = self.graph.edges(nodes[known], limit=limit_per_entity)
        with collector_paused():
            rows = self._neighbor_rows(  # few repeats here: decoding all beats np.unique
                self.index.keys.many(ed.nbr),
                pick(self._rel_objects, ed.rel),
                pick(self._dir_objects, ed.out),
            )
        # edges come grouped by owner, in the order of `known`
        ends = np.cumsum(np.bincount(ed.owner, minlength=len(known))).tolist()
        a = 0
        for k, b in zip(known.tolist(), ends, strict=True):
            if b > a:
                out[ids[k]] = rows[a:b]
            a = b
        return out

    async def expand(self, seeds: Sequence[str], depth: int, *, max_triples: int) -> Subgraph:
        sub = Subgraph(seeds=list(seeds), depth=depth)
        nodes = self.index.lookup(list(dict.fromkeys(seeds)))
        res = self.graph.expand(nodes[nodes >= 0], depth, max_triples)
        sub.triples = self.triples_of(res.eids, sort=True)
        sub.truncated, sub.truncation_reason = res.truncated, res.reason
        return sub

    async def search(
        self, text: str, *, limit: int = 10, fuzzy: bool = True, prefix: bool = False
    ) -> list[EntityMatch]:
        return self.index.search(text, limit, fuzzy, prefix=prefix)

    async def contains(self, triples: Sequence[Triple]) -> list[bool]:
        heads = self.index.lookup([t.head for t in triples])
        tails = self.index.lookup([t.tail for t in triples])
        out = []
        for t, h, tl in zip(triples, heads.tolist(), tails.tolist(), strict=True):
            r = self._rel_id.get(t.relation)
            out.append(h >= 0 and tl >= 0 and r is not None and self.graph.has_edge(h, r, tl))
        return out

    def fingerprint(self) -> str:
        return self.manifest.fingerprint
