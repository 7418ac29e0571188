"""The cleaning applied to the Freebase dump, one rule per kind of line dropped.

Each rule says where it comes from. PoG (SteveTANTAN/PoG) inherits ToG's Freebase access
(IDEA-FinAI/ToG, `freebase_func.py`); neither publishes a cleaned dump or a cleaning
script, so the rules are what their queries and filters keep:

- ToG `abandon_rels`: a relation is never explored if it is `type.object.type`,
  `type.object.name`, starts with `common.` or `freebase.`, or contains `sameAs`;
- ToG `entity_search` keeps only tail ids starting `m.`; PoG's exploration also keeps
  `g.` ids (its `entity.startswith("m.") ... or entity.startswith("g.")` checks), so
  entity-to-entity edges are those between `m.`/`g.` ids;
- PoG Appendix D.3 names an entity by `type.object.name` with `lang(?name) = 'en'`;
  other languages are never shown;
- PoG Appendix D.1 follows every predicate of an entity, but literal objects are not
  entities (D.3 names only entities; kgreason's literal policy "drop", kg/loaders/rdf.py);
- the `type.type.*` / `type.property.*` schema (a ToG derivative's `abandon_rels` adds
  `type.type.`) and `http://rdf.freebase.com/key/` keys (ToG's `abandon_rels_description`
  variant) describe Freebase itself, not the world.

Relation-level rules can be switched off (`keep`), e.g. to explore `common.topic.*`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

NS = b"<http://rdf.freebase.com/ns/"
KEY_NS = b"<http://rdf.freebase.com/key/"
NAME_PREDICATE = NS + b"type.object.name>"

#: rule -> (what it drops, where it comes from)
RULES: dict[str, tuple[str, str]] = {
    "name_other_language": (
        "type.object.name in a language other than the one configured",
        "PoG Appendix D.3: FILTER (lang(?name) = 'en')",
    ),
    "type_object": (
        "type.object.type / type.object.key / other type.object.* (types, keys, ids)",
        "ToG abandon_rels: type.object.type, type.object.name",
    ),
    "schema": (
        "type.type.*, type.property.*, type.domain.* and other type.* schema lines",
        "a ToG derivative's abandon_rels: type.type.*; Freebase's own schema",
    ),
    "common": (
        "common.* (topic descriptions, aliases, notable types, articles, images)",
        "ToG abandon_rels: relation.startswith('common.')",
    ),
    "freebase_meta": (
        "freebase.* (Freebase's own bookkeeping)",
        "ToG abandon_rels: relation.startswith('freebase.')",
    ),
    "key": (
        "keys: predicates under http://rdf.freebase.com/key/",
        "ToG abandon_rels_description: 'http://rdf.freebase.com/key/' in relation",
    ),
    "non_freebase_predicate": (
        "predicates outside the ns/ namespace (rdf:type, rdfs:label, owl:sameAs, ...)",
        "ToG abandon_rels: 'sameAs' in relation; the others duplicate type.object.*",
    ),
    "literal": (
        "literal objects other than names (dates, numbers, strings)",
        "PoG D.3 / kgreason literal policy 'drop': literals are not entities",
    ),
    "subject_not_entity": (
        "subjects that are not m./g. ids (schema objects, domains, users)",
        "ToG entity_search / PoG exploration: entities are m./g. ids",
    ),
    "object_not_entity": (
        "IRI objects that are not m./g. ids (types, languages, external IRIs)",
        "ToG entity_search: keeps tail ids starting 'm.'; PoG also 'g.'",
    ),
}
#: the rules `keep` may switch off: they drop whole relations
RELATION_RULES = ("type_object", "schema", "common", "freebase_meta")

EDGE = "edge"
NAME = "name"


@dataclass(frozen=True)
class Cleaning:
    #: language of the names kept (`en` also takes `en-*` variants, as rdf.py does)
    lang: str = "en"
    #: relation-level rules switched off
    keep: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        bad = [k for k in self.keep if k not in RELATION_RULES]
        if bad:
            raise ValueError(f"cannot keep {bad}: only {RELATION_RULES} can be switched off")
        if not self.lang or not all(c.isalnum() or c == "-" for c in self.lang):
            raise ValueError(f"not a language tag: {self.lang!r}")

    def describe(self) -> dict[str, object]:
        return {"lang": self.lang, "keep": sorted(self.keep)}


def predicate_rule(predicate: bytes, cleaning: Cleaning) -> tuple[str, str]:
    """(EDGE or NAME or a dropping rule, relation name) for one predicate term."""
    if predicate == NAME_PREDICATE:
        return NAME, "type.object.name"
    if predicate.startswith(KEY_NS):
        return "key", ""
    if not (predicate.startswith(NS) and predicate.endswith(b">")):
        return "non_freebase_predicate", ""
    rel = predicate[len(NS) : -1].decode("utf-8", "replace")
    for prefix, rule in (
        ("type.object.", "type_object"),
        ("type.", "schema"),
        ("common.", "common"),
        ("freebase.", "freebase_meta"),
    ):
        if rel.startswith(prefix) and rule not in cleaning.keep:
            return rule, rel
    return EDGE, rel


def rule_table(counts: dict[str, int], order: Iterable[str] = RULES) -> list[dict[str, object]]:
    """The report of what was dropped, by rule, with each rule's source."""
    return [
        {"rule": r, "lines": int(counts.get(r, 0)), "what": RULES[r][0], "source": RULES[r][1]}
        for r in order
    ]
