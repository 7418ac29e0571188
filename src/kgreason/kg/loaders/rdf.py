"""N-Triples and Turtle through pyoxigraph's parser.

Freebase IRIs are shortened the way PoG shows them (`http://rdf.freebase.com/ns/m.0x2b` ->
`m.0x2b`, relations to their dotted names). Name triples (`rdfs:label`,
`type.object.name`) become names, not edges; English or untagged labels win over others.
Literal objects become nodes identified (and named) by their lexical value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

from kgreason.kg.loaders.lines import LoadError

FREEBASE_NS = ("http://rdf.freebase.com/ns/", "https://rdf.freebase.com/ns/")
NAME_PREDICATES = frozenset({"http://www.w3.org/2000/01/rdf-schema#label", "type.object.name"})
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


def _lang_rank(lit: ox.Literal) -> int:
    lang = (lit.language or "").lower()
    return 0 if lang in ("", "en") or lang.startswith("en-") else 1


def iter_rdf(
    path: Path, stream: BinaryIO, fmt: str, names: dict[str, str]
) -> Iterator[tuple[str, str, str]]:
    rdf_format = ox.RdfFormat.N_TRIPLES if fmt == "nt" else ox.RdfFormat.TURTLE
    rank: dict[str, int] = {}
    try:
        for quad in ox.parse(stream, format=rdf_format):
            s, p, o = short_id(quad.subject), short_id(quad.predicate), quad.object
            if p in NAME_PREDICATES and isinstance(o, ox.Literal):
                r = _lang_rank(o)
                if s not in names or r < rank[s]:
                    names[s], rank[s] = o.value, r
                continue
            yield s, p, short_id(o)
    except SyntaxError as e:
        line = getattr(e, "lineno", None) or "?"
        raise LoadError(f"{path}:{line}: {fmt} syntax error: {e.msg or e}") from e
    except OSError as e:
        raise LoadError(f"{path}: unreadable: {e}") from e
