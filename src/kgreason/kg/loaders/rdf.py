"""N-Triples and Turtle through pyoxigraph's parser.

Freebase IRIs are shortened the way PoG shows them (`http://rdf.freebase.com/ns/m.0x2b` ->
`m.0x2b`, relations to their dotted names). Name triples (`type.object.name`, `rdfs:label`,
literal `owl:sameAs`) become names, not edges, chosen as the SPARQL backend chooses them
(`SparqlKG.names`): by predicate (that order), then English, other English variants
(`en-GB`), untagged, then the smallest value; names in other languages are ignored, as
Appendix D's `lang` filter does. Other literal objects follow the literal policy
(`LITERAL_POLICIES`): dropped (default) or kept as nodes identified by their lexical value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

from kgreason.kg.loaders.lines import LoadError

FREEBASE_NS = ("http://rdf.freebase.com/ns/", "https://rdf.freebase.com/ns/")
#: Name predicates in order of preference (short IDs, as `short_id` gives them).
NAME_PREDICATES = (
    "type.object.name",
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2002/07/owl#sameAs",
)
_NAME_RANK = {p: i for i, p in enumerate(NAME_PREDICATES)}
#: "drop": literal-valued facts are not edges (PoG/ToG keep only entities after D.1).
#: "keep": each literal object becomes a node whose ID and name are its lexical value.
LITERAL_POLICIES = ("drop", "keep")
#: Freebase MIDs / GIDs and blank nodes: shown as "Unnamed Entity" when they have no name.
UNNAMED_ID = re.compile(r"^(?:[mg]\.[0-9a-z_]+|_:.*)$")


def short_id(term: ox.NamedNode | ox.BlankNode | ox.Literal) -> str:
    if isinstance(term, ox.NamedNode):
        iri = term.value
        for ns in FREEBASE_NS:
            if iri.startswith(ns):
                return iri[len(ns) :]
        return iri
    if isinstance(term, ox.BlankNode):
        return "_:" + term.value
    return term.value


def _lang_rank(lit: ox.Literal) -> int | None:
    """0 English, 1 another English variant, 2 untagged, None for other languages."""
    lang = (lit.language or "").lower()
    if lang == "en":
        return 0
    if lang.startswith("en-"):
        return 1
    return 2 if not lang else None


def check_literal_policy(policy: str) -> str:
    if policy not in LITERAL_POLICIES:
        raise LoadError(f"literal policy must be one of {LITERAL_POLICIES}, not {policy!r}")
    return policy


def iter_rdf(
    path: Path,
    stream: BinaryIO,
    fmt: str,
    names: dict[str, str],
    *,
    literals: str = "drop",
    dropped: dict[str, int] | None = None,
) -> Iterator[tuple[str, str, str]]:
    """Edge triples of one RDF file; fills `names`, and `dropped` (subject -> number of
    literal-valued triples left out) under the "drop" policy."""
    rdf_format = ox.RdfFormat.N_TRIPLES if fmt == "nt" else ox.RdfFormat.TURTLE
    keep = check_literal_policy(literals) == "keep"
    rank: dict[str, tuple[int, int, str]] = {}
    try:
        for quad in ox.parse(stream, format=rdf_format):
            s, p, o = short_id(quad.subject), short_id(quad.predicate), quad.object
            if isinstance(o, ox.Literal):
                if p in _NAME_RANK:
                    lang = _lang_rank(o)
                    if lang is not None:
                        key = (_NAME_RANK[p], lang, o.value)
                        if s not in rank or key < rank[s]:
                            names[s], rank[s] = o.value, key
                    continue
                if not keep:
                    if dropped is not None:
                        dropped[s] = dropped.get(s, 0) + 1
                    continue
            yield s, p, short_id(o)
    except SyntaxError as e:
        line = getattr(e, "lineno", None) or "?"
        raise LoadError(f"{path}:{line}: {fmt} syntax error: {e.msg or e}") from e
    except OSError as e:
        raise LoadError(f"{path}: unreadable: {e}") from e
