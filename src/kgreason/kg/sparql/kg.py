"""`SparqlKG`: the KnowledgeGraph interface over a SPARQL endpoint (Virtuoso, Oxigraph, ...).

Answers are the same as `MemoryKG` over the same triples, and as a store built with the
"drop" literal policy (`KGSettings.literals`): entity-valued edges only (literal-valued
facts are not neighbours: ToG/PoG keep only `m.` entities after D.1; `Dialect.edge_filter`
sends `FILTER(isIRI(?e))`). "keep" is refused: a literal node's ID is free text that would
have to be matched by value (every datatype and language variant) in every query,
which neither index lookups nor ID validation cover. Noise relations dropped, names in English or
untagged, unknown IDs absent from `names`. Each operation sends one query per batch of
`batch_size` IDs (VALUES), paged past the server's row caps (see `queries.select_all`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from kgreason.kg.base import (
    UNNAMED,
    Closeable,
    EntityMatch,
    KGError,
    Neighbor,
    Subgraph,
    Triple,
    is_noise_relation,
)
from kgreason.kg.expansion import bounded_bfs
from kgreason.kg.settings import DEFAULT_NOISE_PREFIXES, KGSettings
from kgreason.kg.sparql import queries as Q
from kgreason.kg.sparql import search as S
from kgreason.kg.sparql.client import DEFAULT_MAX_REPLY_BYTES, RetryPolicy, SparqlClient
from kgreason.kg.sparql.dialects import Dialect, get_dialect

SEARCH_MODES = ("scan", "lookup", "virtuoso-text")


def _chunks(items: Sequence, size: int) -> list[Sequence]:
    return [items[i : i + size] for i in range(0, len(items), size)]


class SparqlKG(Closeable):
    def __init__(
        self,
        url: str,
        *,
        dialect: str = "freebase",
        timeout_s: float = 30.0,
        max_retries: int = 3,
        page_size: int = 10_000,
        noise_prefixes: Sequence[str] = DEFAULT_NOISE_PREFIXES,
        client: SparqlClient | None = None,
        batch_size: int = 200,
        search_candidates: int = 1000,
        search_mode: str = "scan",
        default_graph: str | None = None,
        literals: str = "drop",
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ):
        if literals != "drop":
            raise KGError(
                f"SPARQL endpoint {url}: literal policy {literals!r} is not supported, only "
                "'drop' (literal objects are never neighbours); set kg.literals = \"drop\""
            )
        if page_size < 1 or batch_size < 1:
            raise ValueError("page_size and batch_size must be >= 1")
        if search_mode not in SEARCH_MODES:
            raise ValueError(f"search_mode must be one of {SEARCH_MODES}, not {search_mode!r}")
        self.search_mode = search_mode
        self.name = url
        self.url = url
        self.dialect: Dialect = get_dialect(dialect)
        self.page_size = page_size
        self.batch_size = batch_size
        self.search_candidates = search_candidates
        self._noise = tuple(noise_prefixes)
        self._client = client or SparqlClient(
            url,
            timeout_s=timeout_s,
            retry=RetryPolicy(max_retries=max_retries),
            default_graph=default_graph,
            max_reply_bytes=max_reply_bytes,
        )
        self._default_graph = default_graph

    @classmethod
    def from_settings(cls, settings: KGSettings, **kwargs) -> SparqlKG:
        if not settings.sparql_url:
            raise ValueError("kg.sparql_url is not set")
        return cls(
            settings.sparql_url,
            dialect=settings.dialect,
            timeout_s=settings.timeout_s,
            max_retries=settings.max_retries,
            page_size=settings.page_size,
            noise_prefixes=settings.noise_prefixes,
            literals=settings.literals,
            max_reply_bytes=settings.max_reply_bytes,
            **kwargs,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    def close(self) -> None:
        """Close the HTTP client from sync code; inside a running loop use `aclose`."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(self.aclose())  # a client bound to another loop is just dropped
            return
        raise KGError(f"{self.name}: close() inside a running event loop; await aclose()")

    def fingerprint(self) -> str:
        graph = f"#{self._default_graph}" if self._default_graph else ""
        return f"sparql:{self.dialect.name}:{self.url}{graph}"

    async def _select(self, query: str, order_by: str, **kw) -> list[Q.Row]:
        rows, _ = await Q.select_all(self._client, query, order_by, self.page_size, **kw)
        return rows

    def _entities(self, ids: Sequence[str]) -> list[str]:
        """Validated, de-duplicated IDs (raises InvalidIdentifierError on the first bad one)."""
        for i in ids:
            self.dialect.check_entity(i)
        return list(dict.fromkeys(ids))

    def _edge(self, row: Q.Row) -> tuple[str, Neighbor] | None:
        seed = self.dialect.entity_id(row["s"].value)
        rel = self.dialect.relation_id(row["r"].value)
        ent = self.dialect.entity_id(row["e"].value) if row["e"].type == "uri" else None
        direction = row["dir"].value
        if seed is None or rel is None or ent is None or direction not in ("head", "tail"):
            return None
        if is_noise_relation(rel, self._noise):
            return None
        return seed, Neighbor(ent, rel, direction)  # type: ignore[arg-type]

    async def _neighbors(
        self, ids: Sequence[str], *, max_rows: int | None = None
    ) -> dict[str, list[Neighbor]]:
        out: dict[str, list[Neighbor]] = {i: [] for i in ids}
        fetched = 0
        for chunk in _chunks(list(ids), self.batch_size):
            budget = None if max_rows is None else max_rows - fetched
            if budget is not None and budget <= 0:
                break
            rows = await self._select(
                Q.neighbors_query(self.dialect, chunk, self._noise, named=False),
                "?s ?dir ?r ?e",
                max_rows=budget,
                keep=lambda r: self._edge(r) is not None,
            )
            fetched += len(rows)
            for row in rows:
                seed, nb = self._edge(row)  # type: ignore[misc]
                out[seed].append(nb)
        for nbs in out.values():
            nbs.sort(key=lambda n: (n.direction != "tail", n.relation, n.entity))
        return out

    async def neighbors(
        self, ids: Sequence[str], *, limit_per_entity: int | None = None
    ) -> dict[str, list[Neighbor]]:
        """D.1 batched: neighbours of each id, tail edges first, then by relation and ID."""
        found = await self._neighbors(self._entities(ids))
        return {i: found[i][:limit_per_entity] for i in ids}

    async def neighbors_named(self, ids: Sequence[str]) -> dict[str, list[tuple[Neighbor, str]]]:
        """D.3 batched: neighbours with their names ("Unnamed Entity" for CVTs) in one query.
        Names come from the first name predicate only (`type.object.name`, `rdfs:label`)."""
        uniq = self._entities(ids)
        best: dict[tuple[str, Neighbor], tuple[tuple[int, str], str]] = {}
        for chunk in _chunks(uniq, self.batch_size):
            query = Q.neighbors_query(self.dialect, chunk, self._noise, named=True)
            for row in await self._select(query, "?s ?dir ?r ?e ?ename"):
                edge = self._edge(row)
                if edge is None:
                    continue
                name, lang = row["ename"].value, row["ename"].lang.lower()
                if name == UNNAMED and row["ename"].type == "literal" and not lang:
                    name = self.dialect.fallback_name(edge[1].entity)
                key = (0 if lang == self.dialect.lang else (1 if lang else 2), name)
                if edge not in best or key < best[edge][0]:
                    best[edge] = (key, name)
        out: dict[str, list[tuple[Neighbor, str]]] = {i: [] for i in uniq}
        for (seed, nb), (_, name) in best.items():
            out[seed].append((nb, name))
        for items in out.values():
            items.sort(key=lambda x: (x[0].direction != "tail", x[0].relation, x[0].entity))
        return {i: out[i] for i in ids}

    async def names(self, ids: Sequence[str]) -> dict[str, str]:
        """D.2 batched; unknown IDs are absent; known but nameless ones get
        `Dialect.fallback_name` (UNNAMED for MIDs/Q-numbers, else the ID itself)."""
        uniq = self._entities(ids)
        preds = self.dialect.name_predicates
        ranked: dict[str, tuple[tuple[int, int, str], str]] = {}
        for chunk in _chunks(uniq, self.batch_size):
            for row in await self._select(Q.names_query(self.dialect, chunk), "?e ?p ?n"):
                eid = self.dialect.entity_id(row["e"].value)
                if eid is None or row["p"].value not in preds:
                    continue
                lang = row["n"].lang.lower()
                lang_rank = 0 if lang == self.dialect.lang else (1 if lang else 2)
                key = (preds.index(row["p"].value), lang_rank, row["n"].value)
                if eid not in ranked or key < ranked[eid][0]:
                    ranked[eid] = (key, row["n"].value)
        found = {e: v for e, (_, v) in ranked.items()}
        missing = [i for i in uniq if i not in found]
        for chunk in _chunks(missing, self.batch_size):
            for row in await self._select(Q.exists_query(self.dialect, chunk), "?e"):
                eid = self.dialect.entity_id(row["e"].value)
                if eid is not None:
                    found[eid] = self.dialect.fallback_name(eid)
        return {i: found[i] for i in ids if i in found}

    async def expand(self, seeds: Sequence[str], depth: int, *, max_triples: int) -> Subgraph:
        """Breadth-first, one batched 1-hop query per level, same semantics as MemoryKG.

        Each level fetches at most len(seen) + 2*(remaining+1) edges: a previously seen
        triple comes back at most once and a new one at most twice, so hitting that bound
        proves the level holds more than `remaining` new triples (truncated, as MemoryKG).
        """
        self._entities(seeds)  # validate every seed before the first query

        async def fetch(frontier: list[str], n_seen: int) -> dict[str, list[Neighbor]]:
            budget = n_seen + 2 * (max_triples - n_seen + 1)
            return await self._neighbors(frontier, max_rows=budget)

        return await bounded_bfs(seeds, depth, max_triples, fetch)

    async def search(
        self, text: str, *, limit: int = 10, fuzzy: bool = True, prefix: bool = False
    ) -> list[EntityMatch]:
        """Name lookups, plus (search_mode="scan") a trigram-REGEX scan, ranked client-side.
        `prefix` is accepted and ignored: an endpoint's search stays as below (a prefix
        query would be a STRSTARTS scan over every name literal).

        "scan" matches MemoryKG (exact, case/diacritic-insensitive, fuzzy) but reads every
        name literal: fine for small and mid-size endpoints, too slow for full Freebase or
        Wikidata, and bounded by `search_candidates` rows. "lookup" only asks for the text
        and its case/spacing variants (index lookups, fast anywhere): no diacritic folding,
        no typo tolerance. "virtuoso-text" takes candidates from Virtuoso's free-text index
        (bif:contains, word prefixes; the index must be enabled on the server): fast and
        typo-tolerant after the 4th letter, but without diacritic folding.
        Unnamed entities are never found by their ID.
        """
        texts = S.case_variants(text) if self.search_mode == "lookup" else [text]
        exact = await self._select(Q.exact_name_query(self.dialect, texts), "?e")
        ids_ = [r["e"].value for r in exact]
        pattern = None
        if self.search_mode == "scan":
            pattern = S.candidate_filter(text)
        elif self.search_mode == "virtuoso-text":
            pattern = S.virtuoso_text_filter(text)
        if pattern:
            query = Q.candidate_name_query(self.dialect, pattern)
            rows = await self._select(query, "?e", max_rows=self.search_candidates)
            ids_ += [r["e"].value for r in rows]
        cands = [e for e in (self.dialect.entity_id(i) for i in ids_) if e is not None]
        names = await self.names(list(dict.fromkeys(cands)))
        names = {e: n for e, n in names.items() if n not in (UNNAMED, e)}
        return S.rank(text, names, limit=limit, fuzzy=fuzzy)

    async def contains(self, triples: Sequence[Triple]) -> list[bool]:
        """Whether each triple is in the KG; IDs are validated (InvalidIdentifierError)."""
        keys = [(t.head, t.relation, t.tail) for t in triples]
        for h, r, t in keys:
            self.dialect.check_entity(h)
            self.dialect.check_relation(r)
            self.dialect.check_entity(t)
        present: set[tuple[str, str, str]] = set()
        d = self.dialect
        for chunk in _chunks(list(dict.fromkeys(keys)), self.batch_size):
            for row in await self._select(Q.contains_query(d, chunk), "?s ?p ?o"):
                key = (
                    d.entity_id(row["s"].value),
                    d.relation_id(row["p"].value),
                    d.entity_id(row["o"].value),
                )
                present.add(key)  # type: ignore[arg-type]
        return [k in present for k in keys]
