"""An in-memory KG over a list of triples: for programmatic graphs, small files and tests.

It implements the same `KnowledgeGraph` interface as the on-disk store and the SPARQL
endpoints, with the same semantics (noise filtering, direction labels, bounded expansion).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from kgreason.kg.base import (
    UNNAMED,
    Closeable,
    EntityMatch,
    Neighbor,
    Subgraph,
    Triple,
    is_noise_relation,
)
from kgreason.kg.expansion import bounded_bfs
from kgreason.kg.ranking import group_by_norm, rank_grouped
from kgreason.kg.settings import DEFAULT_NOISE_PREFIXES

__all__ = ["MemoryKG"]


class MemoryKG(Closeable):
    """Holds nothing to release: `close` is a no-op, the context managers work."""

    def __init__(
        self,
        triples: Iterable[Triple | tuple[str, str, str]],
        names: Mapping[str, str] | None = None,
        *,
        name: str = "memory",
        noise_prefixes: Sequence[str] = DEFAULT_NOISE_PREFIXES,
    ):
        self.name = name
        self._noise = tuple(noise_prefixes)
        self._triples: set[Triple] = set()
        out: dict[str, list[Neighbor]] = defaultdict(list)
        in_: dict[str, list[Neighbor]] = defaultdict(list)
        for t in triples:
            t = t if isinstance(t, Triple) else Triple(*t)
            if t in self._triples:
                continue
            self._triples.add(t)
            if is_noise_relation(t.relation, self._noise):
                continue
            out[t.head].append(Neighbor(t.tail, t.relation, "tail"))
            in_[t.tail].append(Neighbor(t.head, t.relation, "head"))
        # each entity's outgoing then incoming edges, concatenated once (read-only)
        self._adj = {e: out.get(e, []) + in_.get(e, []) for e in out.keys() | in_.keys()}
        self._names = dict(names or {})
        # immutable after construction: entity set, labels and name groups are built once
        self._entity_set = frozenset({x for t in self._triples for x in (t.head, t.tail)})
        self._entity_set |= self._names.keys()
        self._labels = {eid: self._names.get(eid, eid) for eid in self._entity_set}
        self._by_norm = group_by_norm(self._labels)
        norms = sorted(self._by_norm)  # prefix search bisects it (kg.ranking.from_sorted)
        self._sorted_norms = (norms, np.fromiter(map(len, norms), np.int64, len(norms)))

    def _entities(self) -> frozenset[str]:
        return self._entity_set

    async def names(self, ids: Sequence[str]) -> dict[str, str]:
        known = self._entity_set
        return {i: self._names.get(i, UNNAMED) if self._names else i for i in ids if i in known}

    async def neighbors(
        self, ids: Sequence[str], *, limit_per_entity: int | None = None
    ) -> dict[str, list[Neighbor]]:
        return {i: self._adj.get(i, [])[:limit_per_entity] for i in ids}  # fresh lists

    async def expand(self, seeds: Sequence[str], depth: int, *, max_triples: int) -> Subgraph:
        async def fetch(frontier: list[str], n_seen: int) -> dict[str, list[Neighbor]]:
            return self._adj

        return await bounded_bfs(seeds, depth, max_triples, fetch)

    async def search(
        self, text: str, *, limit: int = 10, fuzzy: bool = True, prefix: bool = False
    ) -> list[EntityMatch]:
        return rank_grouped(
            text, self._labels, self._by_norm, limit=limit, fuzzy=fuzzy,
            sorted_norms=self._sorted_norms if prefix else None,
        )  # fmt: skip

    async def contains(self, triples: Sequence[Triple]) -> list[bool]:
        return [t in self._triples for t in triples]

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for t in sorted(self._triples):
            h.update(f"{t.head}\t{t.relation}\t{t.tail}\n".encode())
        return "memory:" + h.hexdigest()[:16]
