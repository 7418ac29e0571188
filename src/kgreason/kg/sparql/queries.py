"""Query text for the KG operations (Appendix D, batched with VALUES) and result paging.

Every term spliced into these queries comes from `Dialect.entity_term` / `relation_term`
(validated IDs) or `ids.escape_literal` (escaped text); nothing else is interpolated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kgreason.kg.base import UNNAMED
from kgreason.kg.sparql import ids
from kgreason.kg.sparql.client import SparqlBadResponseError, SparqlClient, SparqlHTTPError, Term
from kgreason.kg.sparql.dialects import Dialect

Row = dict[str, Term]


def values(var: str, terms: Sequence[str]) -> str:
    return f"VALUES {var} {{ {' '.join(terms)} }}"


def neighbors_query(d: Dialect, seeds: Sequence[str], noise: Sequence[str], *, named: bool) -> str:
    """D.1 (and D.3 when `named`) for many seeds at once; `?s` says which seed a row is for.

    For D.3 the name lookup wraps D.1 as a subquery: Virtuoso 7.2 scrambles bindings when
    the OPTIONAL sits beside a multi-row VALUES and the UNION in one group.
    """
    d1 = (
        f"SELECT DISTINCT ?s ?r ?e ?dir WHERE {{ {values('?s', [d.entity_term(i) for i in seeds])} "
        '{ ?s ?r ?e . BIND("tail" AS ?dir) } UNION { ?e ?r ?s . BIND("head" AS ?dir) } '
        f"{d.edge_filter('?r', '?e')} {d.noise_filter('?r', noise)} }}"
    )
    if not named:
        return d1
    pred = f"<{d.name_predicates[0]}>"
    return (
        f"SELECT DISTINCT ?s ?r ?e ?dir ?ename WHERE {{ {{ {d1} }} "
        f"OPTIONAL {{ ?e {pred} ?name . {d.name_filter('?name')} }} "
        f"BIND(COALESCE(?name, {ids.escape_literal(UNNAMED)}) AS ?ename) }}"
    )


def names_query(d: Dialect, entities: Sequence[str]) -> str:
    """D.2 for many entities: every name literal in the dialect's language."""
    preds = [f"<{p}>" for p in d.name_predicates]
    return (
        f"SELECT DISTINCT ?e ?p ?n WHERE {{ {values('?e', [d.entity_term(i) for i in entities])} "
        f"{values('?p', preds)} ?e ?p ?n . {d.name_filter('?n')} }}"
    )


def exists_query(d: Dialect, entities: Sequence[str]) -> str:
    """Which of these entities occur in any triple (as subject or object)."""
    return (
        f"SELECT ?e WHERE {{ {values('?e', [d.entity_term(i) for i in entities])} "
        "FILTER EXISTS { { ?e ?p ?o } UNION { ?s ?p2 ?e } } }"
    )


def contains_query(d: Dialect, triples: Sequence[tuple[str, str, str]]) -> str:
    rows = " ".join(
        f"({d.entity_term(h)} {d.relation_term(r)} {d.entity_term(t)})" for h, r, t in triples
    )
    return f"SELECT DISTINCT ?s ?p ?o WHERE {{ VALUES (?s ?p ?o) {{ {rows} }} ?s ?p ?o }}"


def exact_name_query(d: Dialect, texts: Sequence[str]) -> str:
    """Entities with a name literal equal to one of `texts` (plain or tagged): index lookups."""
    lang = ids.lang_tag(d.lang)
    lits = [ids.escape_literal(t) for t in texts]
    preds = [f"<{p}>" for p in d.name_predicates]
    return (
        f"SELECT DISTINCT ?e WHERE {{ {values('?n', [*lits, *(f'{x}@{lang}' for x in lits)])} "
        f"{values('?p', preds)} ?e ?p ?n . FILTER(isIRI(?e)) }}"
    )


def candidate_name_query(d: Dialect, name_filter: str) -> str:
    """Entities with a name passing `name_filter` (a REGEX/CONTAINS over `?n`): a scan."""
    preds = [f"<{p}>" for p in d.name_predicates]
    ns = f" && STRSTARTS(STR(?e), {ids.escape_literal(d.entity_ns)})" if d.entity_ns else ""
    return (
        f"SELECT DISTINCT ?e WHERE {{ {values('?p', preds)} ?e ?p ?n . {d.name_filter('?n')} "
        f"FILTER(isIRI(?e){ns}) {name_filter} }}"
    )


async def select_all(
    client: SparqlClient,
    query: str,
    order_by: str,
    page_size: int,
    *,
    max_rows: int | None = None,
    keep: Callable[[Row], bool] | None = None,
) -> tuple[list[Row], bool]:
    """All rows of `query`, fetched as ORDER BY + LIMIT/OFFSET pages.

    A page shorter than asked ends the scan, unless the server says it cut the page at its
    own row cap (Virtuoso's ResultSetMaxRows, via `X-SPARQL-MaxRows`): then the page size
    drops to that cap and paging continues. Virtuoso also refuses to sort more than
    MaxSortedTopRows (error SR353) for OFFSET+LIMIT; then the ordered query moves into a
    subquery with the OFFSET/LIMIT outside, which Virtuoso pages in the same order.
    Stops early, returning complete=False, once `max_rows` kept rows are in hand.
    """
    rows: list[Row] = []
    size, offset, first_prev, wrapped = page_size, 0, None, False
    while True:
        if wrapped:
            text = f"SELECT * WHERE {{ {{ {query} ORDER BY {order_by} }} }} LIMIT {size} OFFSET {offset}"
        else:
            text = f"{query} ORDER BY {order_by} LIMIT {size} OFFSET {offset}"
        try:
            res = await client.select(text)
        except SparqlHTTPError as exc:
            if wrapped or "SR353" not in str(exc):
                raise
            wrapped = True
            continue
        n = len(res.rows)
        if n and offset and res.rows[0] == first_prev:
            raise SparqlBadResponseError(client.url, "ignores OFFSET: paging cannot proceed")
        first_prev = res.rows[0] if n else None
        rows.extend(r for r in res.rows if keep is None or keep(r))
        offset += n
        if max_rows is not None and len(rows) >= max_rows:
            return rows, False
        if n == 0:
            return rows, True
        if n < size:
            if not res.capped:
                return rows, True
            size = n
