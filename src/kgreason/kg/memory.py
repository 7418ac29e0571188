"""An in-memory KG over a list of triples: for programmatic graphs, small files and tests.

It implements the same `KnowledgeGraph` interface as the on-disk store and the SPARQL
endpoints, with the same semantics (noise filtering, direction labels, bounded expansion).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher

from kgreason.kg.base import (
    DEFAULT_NOISE_PREFIXES,
    UNNAMED,
    EntityMatch,
    Neighbor,
    Subgraph,
    Triple,
    is_noise_relation,
)


def normalize_name(text: str) -> str:
    """Case- and diacritic-insensitive form used for name matching."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(stripped.casefold().replace("_", " ").split())


class MemoryKG:
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
        self._out: dict[str, list[Neighbor]] = defaultdict(list)
        self._in: dict[str, list[Neighbor]] = defaultdict(list)
        for t in triples:
            t = t if isinstance(t, Triple) else Triple(*t)
            if t in self._triples:
                continue
            self._triples.add(t)
            if is_noise_relation(t.relation, self._noise):
                continue
            self._out[t.head].append(Neighbor(t.tail, t.relation, "tail"))
            self._in[t.tail].append(Neighbor(t.head, t.relation, "head"))
        self._names = dict(names or {})
        self._by_norm: dict[str, list[str]] = defaultdict(list)
        for eid in self._entities():
            self._by_norm[normalize_name(self._names.get(eid, eid))].append(eid)

    def _entities(self) -> set[str]:
        return {x for t in self._triples for x in (t.head, t.tail)} | set(self._names)

    async def names(self, ids: Sequence[str]) -> dict[str, str]:
        known = self._entities()
        return {i: self._names.get(i, UNNAMED) if self._names else i for i in ids if i in known}

    async def neighbors(
        self, ids: Sequence[str], *, limit_per_entity: int | None = None
    ) -> dict[str, list[Neighbor]]:
        out: dict[str, list[Neighbor]] = {}
        for i in ids:
            ns = self._out.get(i, []) + self._in.get(i, [])
            out[i] = ns[:limit_per_entity] if limit_per_entity is not None else ns
        return out

    async def expand(self, seeds: Sequence[str], depth: int, *, max_triples: int) -> Subgraph:
        sub = Subgraph(seeds=list(seeds), depth=depth)
        seen_t: set[Triple] = set()
        visited = set(seeds)
        frontier = list(dict.fromkeys(seeds))
        for _ in range(depth):
            nxt: list[str] = []
            for e in frontier:
                for n in self._out.get(e, []) + self._in.get(e, []):
                    t = n.triple(e)
                    if t not in seen_t:
                        if len(seen_t) >= max_triples:
                            sub.truncated = True
                            sub.truncation_reason = f"max_triples={max_triples} reached"
                            sub.triples = sorted(seen_t)
                            return sub
                        seen_t.add(t)
                    if n.entity not in visited:
                        visited.add(n.entity)
                        nxt.append(n.entity)
            frontier = nxt
        sub.triples = sorted(seen_t)
        return sub

    async def search(self, text: str, *, limit: int = 10, fuzzy: bool = True) -> list[EntityMatch]:
        out: list[EntityMatch] = []
        seen: set[str] = set()
        for eid in sorted(self._entities()):
            if self._names.get(eid, eid) == text:
                out.append(EntityMatch(eid, self._names.get(eid, eid), "exact", 1.0))
                seen.add(eid)
        for eid in sorted(self._by_norm.get(normalize_name(text), [])):
            if eid not in seen:
                out.append(EntityMatch(eid, self._names.get(eid, eid), "normalized", 0.99))
                seen.add(eid)
        if fuzzy and len(out) < limit:
            q = normalize_name(text)
            scored = []
            for norm, eids in self._by_norm.items():
                r = SequenceMatcher(None, q, norm).ratio()
                if r >= 0.6:
                    scored.extend((r, e) for e in eids if e not in seen)
            scored.sort(key=lambda x: (-x[0], x[1]))
            out.extend(
                EntityMatch(e, self._names.get(e, e), "fuzzy", round(r, 4)) for r, e in scored
            )
        return out[:limit]

    async def contains(self, triples: Sequence[Triple]) -> list[bool]:
        return [t in self._triples for t in triples]

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for t in sorted(self._triples):
            h.update(f"{t.head}\t{t.relation}\t{t.tail}\n".encode())
        return "memory:" + h.hexdigest()[:16]
