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
    DEFAULT_NOISE_PREFIXES,
    EntityMatch,
    Neighbor,
    Subgraph,
    Triple,
    is_noise_relation,
)
from kgreason.kg.store.format import RELATIONS, Manifest, StoreFormatError
from kgreason.kg.store.graph import CSRGraph
from kgreason.kg.store.names import NameIndex


class StoreKG:
    def __init__(self, path: Path | str, *, noise_prefixes: Sequence[str] = DEFAULT_NOISE_PREFIXES):
        self.path = Path(path)
        self.name = str(self.path)
        self.manifest = Manifest.read(self.path)
        try:
            self.relations: list[str] = json.loads((self.path / RELATIONS).read_text())
        except (OSError, ValueError) as e:
            raise StoreFormatError(f"{self.path}: unreadable {RELATIONS}: {e}") from e
        self._rel_id = {r: i for i, r in enumerate(self.relations)}
        noise = np.array(
            [is_noise_relation(r, tuple(noise_prefixes)) for r in self.relations], dtype=bool
        )
        self.graph = CSRGraph(self.path, noise)
        self.index = NameIndex(self.path, self.manifest)

    def __repr__(self) -> str:
        return f"StoreKG({self.name!r}, {self.manifest.counts.get('triples', 0)} triples)"

    # --- sync helpers -------------------------------------------------------------------
    def node_ids(self, keys: Sequence[str]) -> np.ndarray:
        """Node id per key (-1 = unknown): the entry point to the numpy fast path."""
        return self.index.lookup(keys)

    def _keys(self, nodes: np.ndarray) -> list[str]:
        """Keys of node ids, decoding each distinct id once (hubs repeat a lot)."""
        uniq, inv = np.unique(nodes, return_inverse=True)
        decoded = self.index.keys.many(uniq)
        return [decoded[i] for i in inv.tolist()]

    def triples_of(self, eids: np.ndarray, *, sort: bool = False) -> list[Triple]:
        h, r, t = self.graph.triples(eids)
        hk, tk = self._keys(h), self._keys(t)
        rels = self.relations
        rows = [(a, rels[b], c) for a, b, c in zip(hk, r.tolist(), tk, strict=True)]
        if sort:  # tuples sort in C; Triple's ordering is the same field order
            rows.sort()
        return [Triple(*x) for x in rows]

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
        keys = self._keys(ed.nbr)
        rels = self.relations
        owners = [out[ids[k]] for k in known.tolist()]
        for o, k, r, d in zip(
            ed.owner.tolist(), keys, ed.rel.tolist(), ed.out.tolist(), strict=True
        ):
            owners[o].append(Neighbor(k, rels[r], "tail" if d else "head"))
        return out

    async def expand(self, seeds: Sequence[str], depth: int, *, max_triples: int) -> Subgraph:
        sub = Subgraph(seeds=list(seeds), depth=depth)
        nodes = self.index.lookup(list(dict.fromkeys(seeds)))
        res = self.graph.expand(nodes[nodes >= 0], depth, max_triples)
        sub.triples = self.triples_of(res.eids, sort=True)
        sub.truncated, sub.truncation_reason = res.truncated, res.reason
        return sub

    async def search(self, text: str, *, limit: int = 10, fuzzy: bool = True) -> list[EntityMatch]:
        return self.index.search(text, limit, fuzzy)

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
