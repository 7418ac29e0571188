"""How IDs map to IRIs, and which predicates carry names, for each kind of endpoint.

- freebase: `ns:` = http://rdf.freebase.com/ns/; IDs are MIDs (`m.0k3f7`) or dotted schema
  names; names from `ns:type.object.name` and literal `owl:sameAs` values (Appendix D.2).
  Only `ns:` relations between `ns:` nodes are edges (rdf:type, owl:sameAs IRIs... are not).
- wikidata: entities `wd:Q..` (http://www.wikidata.org/entity/), relations are the direct
  claims `wdt:P..` (http://www.wikidata.org/prop/direct/); names are `rdfs:label`.
- generic: IDs are full IRIs, names are `rdfs:label`; every IRI-to-IRI triple is an edge.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kgreason.kg.base import UNNAMED, InvalidIdentifierError
from kgreason.kg.sparql import ids

FREEBASE_NS = "http://rdf.freebase.com/ns/"
WD_ENTITY = "http://www.wikidata.org/entity/"
WD_DIRECT = "http://www.wikidata.org/prop/direct/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
OWL_SAMEAS = "http://www.w3.org/2002/07/owl#sameAs"


@dataclass(frozen=True)
class Dialect:
    name: str
    entity_ns: str
    relation_ns: str
    check_entity: Callable[[object], str]
    check_relation: Callable[[object], str]
    #: Predicates whose literal values are names, in order of preference.
    name_predicates: tuple[str, ...]
    #: IDs that mean nothing to a reader (Freebase MIDs, Wikidata Q/P numbers): shown as
    #: "Unnamed Entity" when nameless. Other nameless IDs (Freebase schema names such as
    #: `location.country`, generic IRIs) are shown as themselves, as the embedded store does.
    opaque_id: re.Pattern[str] | None = None
    lang: str = "en"

    def fallback_name(self, eid: str) -> str:
        """D(.) of a known entity that has no name."""
        if self.opaque_id is None or self.opaque_id.fullmatch(eid):
            return UNNAMED if self.opaque_id is not None else eid
        return eid

    def entity_term(self, eid: object) -> str:
        """`<IRI>` for an entity ID; raises InvalidIdentifierError for anything else."""
        return f"<{self.entity_ns}{self.check_entity(eid)}>"

    def relation_term(self, rid: object) -> str:
        return f"<{self.relation_ns}{self.check_relation(rid)}>"

    def entity_id(self, iri: str) -> str | None:
        """The short ID of an IRI, or None when the IRI is not an entity of this dialect."""
        return _short(iri, self.entity_ns, self.check_entity)

    def relation_id(self, iri: str) -> str | None:
        return _short(iri, self.relation_ns, self.check_relation)

    def edge_filter(self, rel: str, ent: str) -> str:
        """FILTER keeping only edges this dialect reports (IRI objects in its namespaces)."""
        conds = [f"isIRI({ent})"]
        if self.relation_ns:
            conds.append(f"STRSTARTS(STR({rel}), {ids.escape_literal(self.relation_ns)})")
        if self.entity_ns:
            conds.append(f"STRSTARTS(STR({ent}), {ids.escape_literal(self.entity_ns)})")
        return "FILTER(" + " && ".join(conds) + ")"

    def noise_filter(self, rel: str, prefixes: Sequence[str]) -> str:
        """Server-side pre-filter of noise relations (the exact check runs client-side too).
        `prefixes` are kg.noise_prefixes: none under kg.noise_filter = "none" (the default,
        Appendix D's unfiltered queries), ToG's list under "tog"; no prefix, no FILTER."""
        conds = []
        for p in prefixes:
            if self.relation_ns and ":" not in p and "/" not in p:
                conds.append(f"STRSTARTS(STR({rel}), {ids.escape_literal(self.relation_ns + p)})")
            elif not self.relation_ns and ":" in p:
                conds.append(f"STRSTARTS(STR({rel}), {ids.escape_literal(p)})")
        return f"FILTER(!({' || '.join(conds)}))" if conds else ""

    def name_filter(self, var: str) -> str:
        """Names in the dialect's language (or untagged), as Appendix D.3's lang filter."""
        lang = ids.escape_literal(ids.lang_tag(self.lang))
        return f'FILTER(isLiteral({var}) && (lang({var}) = "" || langMatches(lang({var}), {lang})))'


def _short(iri: str, ns: str, check: Callable[[object], str]) -> str | None:
    if not iri.startswith(ns):
        return None
    try:
        return check(iri[len(ns) :])
    except InvalidIdentifierError:
        return None


FREEBASE = Dialect(
    name="freebase",
    entity_ns=FREEBASE_NS,
    relation_ns=FREEBASE_NS,
    check_entity=ids.freebase_entity,
    check_relation=ids.freebase_relation,
    name_predicates=(FREEBASE_NS + "type.object.name", OWL_SAMEAS),
    opaque_id=ids.FREEBASE_MID,
)
WIKIDATA = Dialect(
    name="wikidata",
    entity_ns=WD_ENTITY,
    relation_ns=WD_DIRECT,
    check_entity=ids.wikidata_entity,
    check_relation=ids.wikidata_property,
    name_predicates=(RDFS_LABEL,),
    opaque_id=ids.WIKIDATA_ENTITY,
)
GENERIC = Dialect(
    name="generic",
    entity_ns="",
    relation_ns="",
    check_entity=ids.iri,
    check_relation=ids.iri,
    name_predicates=(RDFS_LABEL,),
)
DIALECTS: dict[str, Dialect] = {d.name: d for d in (FREEBASE, WIKIDATA, GENERIC)}


def get_dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(
            f"unknown SPARQL dialect {name!r}; choose from {sorted(DIALECTS)}"
        ) from None
