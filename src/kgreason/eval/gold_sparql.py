"""Relations of a gold SPARQL query, for PoG's Figures 5-7 (reasoning length, path overlap).

PoG (Section 5, "reasoning length"): "determine the reasoning length of each question by
counting the number of relations in their ground-truth SPARQL queries"; Appendix B.2 defines
the overlap ratio of an explored path set P with the gold query S as
|Relation(P) ∩ Relation(S)| / |Relation(S)|.

This is a small tokenizer and triple-pattern walker, not a SPARQL parser. What it does:
- reads every triple pattern in the query body, including inside OPTIONAL/UNION/sub-SELECT
  blocks, with `;` (same subject) and `,` (same subject and predicate) abbreviations;
- skips FILTER(...), BIND(...), VALUES ... {...}, the projection and the solution modifiers
  (ORDER BY, LIMIT, GROUP BY...), and `# comments`;
- names a relation by its local part: `ns:people.person.spouse_s`,
  `<http://rdf.freebase.com/ns/people.person.spouse_s>` and `:people.person.spouse_s` are all
  `people.person.spouse_s`; `a` is `rdf:type`; Wikidata `wdt:P31` stays `P31`.
Its limits, stated: property paths (`ns:a/ns:b`, `^ns:a`, `ns:a*`) are counted as one relation
per IRI they name and are flagged in `GoldQuery.property_path`; a variable predicate
(`?x ?p ?y`) is not a relation and is not counted; the triple patterns of FILTER [NOT]
EXISTS { ... } groups (CWQ's time constraints) are counted, as relations the query names.
A query with no triple pattern gives None; so does one longer than `MAX_QUERY_CHARS` or
nested deeper than `MAX_NESTING` EXISTS groups (a dataset file is input too: it must not
break a run).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: relations PoG's KG access never returns (Freebase bookkeeping, kg/base.py's noise list)
NOISE_PREFIXES = ("type.object.", "common.", "freebase.", "rdf:type")

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<iri><[^<>"{}|^`\\\s]*>)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')(?:@[A-Za-z][\w-]*|\^\^(?:<[^<>\s]*>|[\w.-]*:[\w.-]*))?
  | (?P<var>[?$][A-Za-z_]\w*)
  | (?P<pname>(?:[A-Za-z][\w.-]*)?:[\w][\w.:%-]*|(?:[A-Za-z][\w.-]*)?:(?=[\s.;,)}]))
  | (?P<number>[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_]\w*)
  | (?P<punct>[{}().;,/^|*+!=<>&]|\[|\])
    """,
    re.X,
)
_BLOCK_KEYWORDS = {"filter", "bind"}
#: gold queries of CWQ/WebQSP/GrailQA are under 3,000 characters and nest EXISTS once
MAX_QUERY_CHARS = 50_000
MAX_NESTING = 16
_MODIFIERS = {"order", "group", "having", "limit", "offset"}


@dataclass(frozen=True)
class GoldQuery:
    """The triple patterns of a gold query with a relation as predicate."""

    #: every relation occurrence, in query order (a relation used twice counts twice)
    relations: tuple[str, ...]
    #: True when a property path was seen (see the module docstring)
    property_path: bool = False

    @property
    def length(self) -> int:
        """PoG's reasoning length: the number of relations in the query."""
        return len(self.relations)

    def relation_set(self, *, drop_noise: bool = False) -> frozenset[str]:
        rels = self.relations
        if drop_noise:
            rels = tuple(r for r in rels if not is_noise(r))
        return frozenset(rels)


def is_noise(relation: str) -> bool:
    return relation.startswith(NOISE_PREFIXES)


def local_name(term: str) -> str:
    """`ns:a.b`, `<http://rdf.freebase.com/ns/a.b>`, `:a.b` -> `a.b`; other IRIs keep
    their last path or fragment segment (`.../prop/direct/P31` -> `P31`)."""
    if term == "a":
        return "rdf:type"
    if term.startswith("<") and term.endswith(">"):
        iri = term[1:-1]
        if iri == "http://www.w3.org/1999/02/22-rdf-syntax-ns#type":
            return "rdf:type"
        return re.split(r"[/#]", iri.rstrip("/#"))[-1]
    if ":" in term:
        return term.split(":", 1)[1]
    return term


def _tokens(query: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(query):
        m = _TOKEN.match(query, pos)
        if m is None:  # an unexpected character: skip it rather than fail the whole query
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup or ""
        if kind in ("ws", "comment"):
            continue
        text = m.group(0)
        if kind == "pname" and text.endswith("."):  # `ns:m.0x2b.` ends the triple
            out.append((kind, text.rstrip(".")))
            out.append(("punct", "."))
            continue
        if kind == "word" and text == "a":
            kind = "pname"
        out.append((kind, text))
    return out


def _skip_balanced(toks: Sequence[tuple[str, str]], i: int, open_: str, close: str) -> int:
    """Index after the group opening at toks[i] (which must be `open_`)."""
    depth = 0
    while i < len(toks):
        t = toks[i][1]
        if t == open_:
            depth += 1
        elif t == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def parse_gold_sparql(query: str) -> GoldQuery | None:
    """The relations of `query`'s triple patterns; None when it has none (or is empty)."""
    if not query or not query.strip() or len(query) > MAX_QUERY_CHARS:
        return None
    toks = _tokens(query)
    # the body: from the first "{" on; the prologue and projection hold no triple pattern
    start = next((k for k, t in enumerate(toks) if t[1] == "{"), len(toks))
    try:
        relations, path_seen = _walk(toks[start:])
    except _TooDeep:
        return None
    return GoldQuery(tuple(relations), path_seen) if relations else None


class _TooDeep(Exception):
    """EXISTS groups nested deeper than MAX_NESTING."""


def _exists_blocks(toks: Sequence[tuple[str, str]]) -> list[Sequence[tuple[str, str]]]:
    """The `{...}` groups after EXISTS inside a FILTER expression."""
    out = []
    k = 0
    while k < len(toks):
        if toks[k][1].lower() == "exists" and k + 1 < len(toks) and toks[k + 1][1] == "{":
            end = _skip_balanced(toks, k + 1, "{", "}")
            out.append(toks[k + 1 : end])
            k = end
        else:
            k += 1
    return out


def _walk(toks: Sequence[tuple[str, str]], depth: int = 0) -> tuple[list[str], bool]:
    if depth > MAX_NESTING:
        raise _TooDeep
    relations: list[str] = []
    path_seen = False
    statement: list[str] = []  # terms and the separators ";" "," of one triples block
    i = 0
    while i < len(toks):
        kind, text = toks[i]
        low = text.lower()
        if kind == "word" and low in _BLOCK_KEYWORDS:
            # FILTER(...), FILTER regex(...), FILTER NOT EXISTS {...}, BIND(...): skipped,
            # except the triple patterns of [NOT] EXISTS groups, which constrain the answer
            j = i + 1
            while j < len(toks) and toks[j][0] == "word":
                j += 1
            end = j
            if j < len(toks) and toks[j][1] in "{(":
                end = _skip_balanced(toks, j, toks[j][1], "}" if toks[j][1] == "{" else ")")
            for block in _exists_blocks(toks[i:end]):
                inner, inner_path = _walk(block, depth + 1)
                relations += inner
                path_seen |= inner_path
            i = end
            continue
        if kind == "word" and low == "values":
            j = i + 1
            while j < len(toks) and toks[j][1] != "{":
                j += 1
            i = _skip_balanced(toks, j, "{", "}")
            continue
        if kind == "word" and low in _MODIFIERS:  # ORDER BY ... / LIMIT n: to the block end
            i += 1
            while i < len(toks) and toks[i][1] not in ("{", "}"):
                i += 1
            continue
        if kind == "word" and low == "select":  # a sub-select's projection
            while i < len(toks) and toks[i][1] != "{":
                i += 1
            continue
        i += 1
        if kind in ("iri", "pname", "var", "string", "number"):
            statement.append(text)
        elif kind == "punct" and text in "/|^*+":
            path_seen = True
        elif kind == "punct" and text in (";", ","):
            statement.append(text)
        elif kind == "punct" and text in (".", "{", "}"):
            relations += _statement_relations(statement)
            statement = []
    relations += _statement_relations(statement)
    return relations, path_seen


def _statement_relations(items: Sequence[str]) -> list[str]:
    """Relations of one `s p o ; p o , o .` block (a path adds predicate terms)."""
    out: list[str] = []
    segments: list[list[str]] = [[]]
    for x in items:
        if x == ";":
            segments.append([])
        else:
            segments[-1].append(x)
    for n, seg in enumerate(segments):
        objects = [[]]  # type: list[list[str]]
        for x in seg:
            if x == ",":
                objects.append([])
            else:
                objects[-1].append(x)
        head = objects[0][1:] if n == 0 else objects[0]  # drop the subject
        preds = head[:-1]  # the last term is the first object
        if not preds:
            continue
        for _ in objects:  # `p o1, o2`: one pattern per object
            out += [local_name(p) for p in preds if _is_relation(p)]
    return out


def _is_relation(term: str) -> bool:
    return not term.startswith(("?", "$", '"', "'")) and not term[:1].isdigit()


def relation_overlap(
    path_relations: Iterable[str], gold: GoldQuery, *, drop_noise: bool = True
) -> float | None:
    """PoG's overlap ratio |Relation(P) ∩ Relation(S)| / |Relation(S)| in [0, 1]; None when
    the gold query has no relation left to compare (all noise)."""
    gold_set = gold.relation_set(drop_noise=drop_noise)
    if not gold_set:
        return None
    mine = {local_name(r) for r in path_relations}
    return len(mine & gold_set) / len(gold_set)


def gold_fields(sparql: str | None, paths: Sequence[Sequence[Sequence[str]]]) -> dict[str, object]:
    """The eval-row fields derived from a record's gold query (none without one):
    `sparql_length` (PoG Figs 5-6), `gold_relations` (distinct, query order) and
    `relation_overlap` (Appendix B.2, in [0, 1]) of the method's paths ([head, relation, tail]
    triples), None when the method returned no path or the gold query has no non-noise
    relation. Noise relations (`type.object.*`, `common.*`: type constraints a KG walk never
    returns) are left out of the overlap's denominator and kept in the length."""
    if sparql is None:
        return {}
    gold = parse_gold_sparql(sparql)
    if gold is None:
        return {"sparql_length": None, "gold_relations": [], "relation_overlap": None}
    rels = [t[1] for p in paths for t in p if len(t) == 3]
    return {
        "sparql_length": gold.length,
        "gold_relations": list(dict.fromkeys(gold.relations)),
        "relation_overlap": relation_overlap(rels, gold) if rels else None,
    }
