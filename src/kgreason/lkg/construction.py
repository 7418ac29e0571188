"""LKG construction (paper section 3.1, prompt A.1): the LLM extracts entities, concepts,
relations, rules and constraints; every item is validated on arrival and merged by hash ID.

Validation never silently drops a usable item: a rule whose raw_text is not in the input
is kept with the flag `raw_text_not_in_input`, a related entity that exists only under
another spelling is linked and flagged `linked_fuzzy:<name>`, one that does not exist at all
is flagged `unlinked:<name>`. Items that cannot be used (no name) go to `LKGraph.rejected`
with the reason. A constraint keeps the Table 1 fields of its subtype (Ordering and
AllDifferent: `relation`; Arithmetic: `operation`, `value`); a field given for another subtype
is left out and flagged `field_not_for_type:<field>`. The fields are optional (the paper's
prompt A.1 does not ask for them; older extractions and stores have none).

With a `title` (multi-hop QA passages), every node and fact the extraction adds carries it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from kgreason.lkg.ids import lkg_name_key, node_id, normalize_text
from kgreason.lkg.paper_json import loads_braceless
from kgreason.lkg.prompts import load_prompt
from kgreason.lkg.types import (
    APPLIES_TO,
    CONSTRAINT_FIELDS,
    CONSTRAINT_TYPES,
    IS_A,
    MENTIONS,
    Edge,
    Extraction,
    LKGraph,
    Node,
    NodeKind,
    RawEntity,
    RawLogic,
    RawRelation,
    _lower_keys,
)
from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError, ask_parsed, extract_json
from kgreason.llm.schema import load_stage_schema

STAGE = "lkg_construct"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_KNOWN_KEYS = {"entities", "concepts", "relations", "relationships", "rules", "constraints"}


def _has_lists(data: object) -> bool:
    return isinstance(data, dict) and bool({str(k).lower() for k in data} & _KNOWN_KEYS)


def parse_extraction(text: str) -> Extraction:
    """Read the extraction reply; a ParseError (so `ask_parsed` re-asks) if it has no
    object with any of the expected lists. JSON printed without its braces, as the paper
    prints this reply (Appendix B, Figure 7), is read too (`paper_json`)."""
    try:
        data = extract_json(text)
    except ParseError:
        data = None
    if not _has_lists(data):
        try:
            data = loads_braceless(text)
        except ValueError:
            data = None
    if not isinstance(data, dict) or not _has_lists(data):
        raise ParseError(
            "expected a JSON object with entities/concepts/relationships/rules/constraints"
        )
    try:
        return Extraction.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        raise ParseError(f"key {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def chunk_text(text: str, max_chars: int) -> list[str]:
    """Sentence-aligned chunks of at most `max_chars` (a longer single sentence stays whole)."""
    sentences = [s for s in _SENTENCE.split(text.strip()) if s]
    chunks: list[str] = []
    cur = ""
    for s in sentences:
        if cur and len(cur) + 1 + len(s) > max_chars:
            chunks.append(cur)
            cur = s
        else:
            cur = f"{cur} {s}" if cur else s
    if cur:
        chunks.append(cur)
    return chunks


def _constraint_type(raw: str | None) -> tuple[str, list[str]]:
    if not raw:
        return "Generic", ["constraint_type_missing"]
    key = re.sub(r"[^a-z]", "", raw.lower())
    for t in CONSTRAINT_TYPES:
        if t.lower() == key:
            return t, []
    return "Generic", [f"constraint_type_unknown:{raw}"]


def _constraint_spec(raw: RawLogic, ctype: str, flags: list[str]) -> dict[str, Any]:
    """The Table 1 fields `ctype` has, from the extraction; others given are flagged in
    `flags`, never silently dropped."""
    wanted = CONSTRAINT_FIELDS[ctype]
    spec: dict[str, Any] = {}
    for f in ("relation", "operation", "value"):
        v = getattr(raw, f)
        if v in ("", None):
            continue
        if f in wanted:
            spec[f] = v
        else:
            flags.append(f"field_not_for_type:{f}")
    return spec


class _Linker:
    """Resolves names to nodes: exact normalised name, then spacing-insensitive. The keys
    are indexed by their spacing-free form (in the order they were added), so a fuzzy
    lookup is one dict read, not a scan of every name (quadratic in a reply naming many)."""

    def __init__(self, graph: LKGraph):
        self.by_name: dict[str, list[str]] = {}
        self.by_squashed: dict[str, list[str]] = {}
        self.graph = graph
        for n in graph.of_kind("entity", "concept"):
            self.add(n)

    def add(self, n: Node) -> None:
        for name in [n.name, *n.aliases]:
            key = lkg_name_key(name)
            if key not in self.by_name:
                self.by_name[key] = []
                self.by_squashed.setdefault(key.replace(" ", ""), []).append(key)
            ids = self.by_name[key]
            if n.id not in ids:
                ids.append(n.id)

    def resolve(self, name: str) -> tuple[list[str], bool]:
        key = lkg_name_key(name)
        if key in self.by_name:
            return self.by_name[key], False
        keys = self.by_squashed.get(key.replace(" ", ""), [])
        hits = [i for k in keys for i in self.by_name[k]]
        return hits, bool(hits)


def _check_raw(raw_text: str, source: str) -> list[str]:
    if not raw_text:
        return ["raw_text_missing"]
    if normalize_text(raw_text).rstrip(". ") not in source:
        return ["raw_text_not_in_input"]
    return []


def extraction_to_graph(
    ex: Extraction, source_text: str, into: LKGraph | None = None, *, title: str = ""
) -> LKGraph:
    """Validate an extraction against its input text and add it to `into` (or a new graph).

    Named nodes first (so relations and logic nodes link to them), then relations, then
    rules and constraints; anything invalid is recorded in `graph.rejected`, not raised.
    `title` (a passage's title) is recorded on every node and fact added."""
    g = into if into is not None else LKGraph()
    asm = _Assembler(g, normalize_text(source_text), [title] if title else [])
    for item in ex.entities:
        asm.add_named(item, "entity")
    for item in ex.concepts:
        asm.add_named(item, "concept")
    for item in ex.relations:
        asm.add_relation(item)
    for item in ex.rules:
        asm.add_logic(item, "rule")
    for item in ex.constraints:
        asm.add_logic(item, "constraint")
    return asm.g


class _Assembler:
    """One extraction's additions to a graph, with the name linker they share."""

    def __init__(self, g: LKGraph, source: str, titles: list[str]) -> None:
        self.g, self.source, self.linker = g, source, _Linker(g)
        self.titles = titles

    def node(self, n: Node) -> Node:
        """Add (or merge) a node; a named node already in the graph gains this title too."""
        n.titles = list(self.titles)
        return self.g.add_node(n)

    def edge(self, e: Edge) -> None:
        e.titles = list(self.titles)
        self.g.add_edge(e)

    def add_named(self, item: dict[str, Any], kind: NodeKind) -> None:
        try:
            raw = RawEntity.model_validate(item)
        except ValidationError as e:
            self.g.rejected.append(f"{kind} {item!r}: {e.errors()[0]['msg']}")
            return
        if not lkg_name_key(raw.name):
            self.g.rejected.append(f"{kind} {raw.name!r}: empty name after normalisation")
            return
        typ = "Concept" if kind == "concept" else raw.type
        flags = ["entity_type_missing"] if kind == "entity" and not typ else []
        n = self.node(
            Node(id=node_id(kind, raw.name), kind=kind, name=raw.name, type=typ, flags=flags)
        )
        self.linker.add(n)

    def endpoint(self, name: str, concept: bool) -> str:
        """The node a relation end names; an unknown name becomes an implicit node."""
        ids, _ = self.linker.resolve(name)
        if ids:  # an IS_A target prefers the concept of that name, a source the entity
            want = "concept" if concept else "entity"
            return next((i for i in ids if self.g.nodes[i].kind == want), ids[0])
        kind: NodeKind = "concept" if concept else "entity"
        n = self.node(
            Node(
                id=node_id(kind, name),
                kind=kind,
                name=name,
                type="Concept" if concept else "",
                flags=["implicit"],
            )
        )
        self.linker.add(n)
        return n.id

    def add_relation(self, item: dict[str, Any]) -> None:
        try:
            r = RawRelation.model_validate(item)
        except ValidationError as e:
            self.g.rejected.append(f"relationship {item!r}: {e.errors()[0]['msg']}")
            return
        src = self.endpoint(r.source, concept=False)
        dst = self.endpoint(r.target, concept=r.relation == IS_A)
        flags = _check_raw(r.raw_text, self.source)
        self.edge(Edge(src=src, rel=r.relation, dst=dst, raw_text=r.raw_text, flags=flags))

    def add_logic(self, item: Any, kind: NodeKind) -> None:
        """A rule or constraint node, linked to the named nodes it is about."""
        item = _lower_keys(item)
        if kind == "constraint" and isinstance(item, dict) and not item.get("constraint_type"):
            item = {**item, "constraint_type": item.get("type")}
        try:
            raw = RawLogic.model_validate(item)
        except ValidationError as e:
            self.g.rejected.append(f"{kind} {item!r}: {e.errors()[0]['msg']}")
            return
        flags = _check_raw(raw.raw_text, self.source)
        ctype = "Rule"
        spec: dict[str, Any] = {}
        if kind == "constraint":
            ctype, extra = _constraint_type(raw.constraint_type)
            flags += extra
            spec = _constraint_spec(raw, ctype, flags)
        related, edges = self._link_related(raw.related_entities, flags)
        key = raw.expression or raw.raw_text or raw.description
        name = raw.description or raw.raw_text or raw.expression
        n = self.node(
            Node(
                id=node_id(kind, key),
                kind=kind,
                name=name[:200],
                type=ctype,
                expression=raw.expression,
                raw_text=raw.raw_text,
                description=raw.description,
                related=list(dict.fromkeys(related)),
                flags=flags,
                **spec,
            )
        )
        for rel, i in edges:
            self.edge(Edge(src=n.id, rel=rel, dst=i))

    def _link_related(
        self, names: list[str], flags: list[str]
    ) -> tuple[list[str], list[tuple[str, str]]]:
        """(linked node ids, (relation, id) edges) of a logic node; `flags` gains a note per
        unlinked or fuzzily linked name."""
        related: list[str] = []
        edges: list[tuple[str, str]] = []
        for ent in names:
            if not ent:
                continue
            ids, fuzzy = self.linker.resolve(ent)
            if not ids:
                flags.append(f"unlinked:{ent}")
                continue
            if fuzzy:
                flags.append(f"linked_fuzzy:{ent}")
            for i in ids:
                edges.append((APPLIES_TO if self.g.nodes[i].kind == "concept" else MENTIONS, i))
                related.append(i)
        return related, edges


@dataclass
class LKGBuilder:
    """Runs the extraction LLM over a text (chunked) and returns the validated graph."""

    llm: ChatLLM
    chunk_chars: int = 4000
    temperature: float = 0.0
    max_tokens: int | None = 2048

    async def extract(self, text: str, question: str = "", *, title: str = "") -> LKGraph:
        """The validated LKG of `text`; with `title` (a passage's), every node and fact
        carries it."""
        g = LKGraph()
        for chunk in chunk_text(text, self.chunk_chars) or [text]:
            prompt = load_prompt("construct", context=chunk, question=question or "(none)")
            ex, _ = await ask_parsed(
                self.llm,
                [{"role": "user", "content": prompt}],
                parse_extraction,
                stage=STAGE,
                reminder="Reply with one JSON object with the keys entities, concepts, "
                "relationships, rules and constraints, and nothing else.",
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                schema=load_stage_schema("kgreason.lkg", "construct"),
            )
            extraction_to_graph(ex, f"{chunk}\n{question}", into=g, title=title)
        return g
