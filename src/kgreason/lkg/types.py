"""Typed LKG data: what the extraction LLM returns (validated on arrival) and the graph it
becomes (paper Table 1: Entity, Concept, Rule and Constraint nodes, typed edges).

The raw models accept the spellings models actually produce ("Name"/"name",
"Constriant_type" as in the paper's own prompt) so that one odd key does not throw away an
otherwise good extraction; values are still checked.

Constraints carry the subtype-specific fields of Table 1 (`relation`, `operation`, `value`)
as typed node fields; `constraint_view` gives the paper's four subclasses over them. Every
node and fact also carries the titles of the passages it was extracted from (multi-hop QA).
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NodeKind = Literal["entity", "concept", "rule", "constraint"]
ConstraintType = Literal["Ordering", "AllDifferent", "Arithmetic", "Generic"]
CONSTRAINT_TYPES: tuple[str, ...] = ("Ordering", "AllDifferent", "Arithmetic", "Generic")
LOGIC_KINDS = ("rule", "constraint")
#: the subtype-specific fields of Table 1 each constraint type uses (the rest stay empty)
CONSTRAINT_FIELDS: dict[str, tuple[str, ...]] = {
    "Ordering": ("relation",),
    "AllDifferent": ("relation",),
    "Arithmetic": ("operation", "value"),
    "Generic": (),
}

#: edge relations the logical hull follows (paper eq. 2)
MENTIONS = "MENTIONS"
APPLIES_TO = "APPLIES_TO"
IS_A = "IS_A"
RELATED_TO = "RELATED_TO"
HULL_RELATIONS = (MENTIONS, IS_A, APPLIES_TO)

_KEY_ALIASES = {
    "constriant_type": "constraint_type",
    "constraint type": "constraint_type",
    "relationship": "relation",
    "rel": "relation",
    "subject": "source",
    "object": "target",
    "raw_expression": "expression",
    "formula": "expression",
    "entities": "related_entities",
    "related entities": "related_entities",
    "op": "operation",
    "operator": "operation",
}
_TOP_ALIASES = {"relationships": "relations", "relation": "relations", "constraint": "constraints"}


def _lower_keys(data: Any, aliases: dict[str, str] = _KEY_ALIASES) -> Any:
    if not isinstance(data, dict):
        return data
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = str(k).strip().lower()
        out[aliases.get(key, key)] = v
    return out


def _as_str(v: Any) -> str:
    return "" if v is None else str(v).strip()


def constraint_value(v: Any) -> int | float | str | None:
    """A constraint's `value` as the number it spells when it is one ("3.8" -> 3.8,
    "1988" -> 1988), else the stripped text; empty -> None. Booleans and containers are
    kept as text, so a model's odd reply never becomes a wrong number."""
    if v is None or isinstance(v, bool):
        return None if v is None else str(v)
    if isinstance(v, int | float):
        return v
    if isinstance(v, list | dict):
        return json.dumps(v, ensure_ascii=False)
    text = str(v).strip()
    if not text:
        return None
    for conv in (int, float):
        try:
            num = conv(text)
        except ValueError:
            continue
        if conv is int or math.isfinite(num):
            return num
    return text


class _Raw(BaseModel):
    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, data: Any) -> Any:
        return _lower_keys(data)


class RawEntity(_Raw):
    name: str = Field(min_length=1)
    type: str = ""

    _strip = field_validator("name", "type", mode="before")(_as_str)


class RawRelation(_Raw):
    source: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    target: str = Field(min_length=1)
    raw_text: str = ""

    _strip = field_validator("source", "relation", "target", "raw_text", mode="before")(_as_str)

    @field_validator("relation")
    @classmethod
    def _upper(cls, v: str) -> str:
        return "_".join(v.replace("-", " ").upper().split())


class RawLogic(_Raw):
    """A rule or a constraint as extracted (same fields; constraints add a type)."""

    expression: str = ""
    raw_text: str = ""
    description: str = ""
    related_entities: list[str] = Field(default_factory=list)
    constraint_type: str | None = None
    #: constraint subtype fields (Table 1): Ordering/AllDifferent `relation`, Arithmetic
    #: `operation` and `value`
    relation: str = ""
    operation: str = ""
    value: int | float | str | None = None

    _strip = field_validator("expression", "raw_text", "description", mode="before")(_as_str)

    @field_validator("relation", mode="before")
    @classmethod
    def _relation(cls, v: Any) -> str:
        return "_".join(_as_str(v).replace("-", " ").upper().split())

    @field_validator("operation", mode="before")
    @classmethod
    def _operation(cls, v: Any) -> str:
        return " ".join(_as_str(v).split())

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, v: Any) -> int | float | str | None:
        return constraint_value(v)

    @field_validator("related_entities", mode="before")
    @classmethod
    def _names(cls, v: Any) -> list[str]:
        if v is None:
            return []
        if isinstance(v, str):
            v = [v]
        return [_as_str(x.get("name") if isinstance(x, dict) else x) for x in v if x]

    @model_validator(mode="after")
    def _something(self) -> RawLogic:
        if not (self.expression or self.raw_text or self.description):
            raise ValueError("a rule/constraint needs an expression, raw_text or description")
        return self


class Extraction(BaseModel):
    """The extraction LLM's reply (prompt A.1). Lists, each item validated independently."""

    model_config = ConfigDict(extra="ignore")

    entities: list[dict[str, Any]] = Field(default_factory=list)
    concepts: list[dict[str, Any]] = Field(default_factory=list)
    relations: list[dict[str, Any]] = Field(default_factory=list)
    rules: list[dict[str, Any]] = Field(default_factory=list)
    constraints: list[dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, data: Any) -> Any:
        data = _lower_keys(data, _TOP_ALIASES)
        if isinstance(data, dict):
            for k, v in list(data.items()):
                if v is None:
                    data[k] = []
        return data


class Node(BaseModel):
    """One LKG node. `flags` records validation problems (never silently dropped)."""

    id: str
    kind: NodeKind
    name: str
    #: semantic type for entities ("Person"), "Concept" for concepts, the constraint type
    #: for constraints, "Rule" for rules
    type: str = ""
    expression: str = ""
    raw_text: str = ""
    description: str = ""
    related: list[str] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)
    #: constraint subtype fields (Table 1); empty/None where the subtype has no such field
    relation: str = ""
    operation: str = ""
    value: int | float | str | None = None
    #: titles of the passages this node was extracted from (multi-hop QA), first first
    titles: list[str] = Field(default_factory=list)

    def spec(self) -> dict[str, Any]:
        """The constraint subtype fields that are set (what storage keeps as JSON)."""
        out: dict[str, Any] = {}
        if self.relation:
            out["relation"] = self.relation
        if self.operation:
            out["operation"] = self.operation
        if self.value is not None:
            out["value"] = self.value
        return out

    def content(self) -> str:
        """The text a reader (pruner, codegen, BM25, embedder) sees for this node."""
        if self.kind in LOGIC_KINDS:
            parts = [self.raw_text or self.description, self.expression]
            spec = self.spec()
            if spec:
                parts.append(", ".join(f"{k}={v}" for k, v in spec.items()))
            return " | ".join(str(p) for p in parts if p)
        return f"{self.name} ({self.type})" if self.type else self.name

    def embed_text(self) -> str:
        if self.kind in LOGIC_KINDS:
            return self.description or self.raw_text or self.expression
        return self.name


class Edge(BaseModel):
    src: str
    rel: str
    dst: str
    raw_text: str = ""
    flags: list[str] = Field(default_factory=list)
    #: titles of the passages stating this fact (multi-hop QA), first first
    titles: list[str] = Field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.src, self.rel, self.dst)


class LKGraph(BaseModel):
    """An LKG fragment (one document's extraction, or a retrieved subgraph)."""

    nodes: dict[str, Node] = Field(default_factory=dict)
    edges: dict[str, Edge] = Field(default_factory=dict)
    #: extraction items that could not be used at all, with the reason
    rejected: list[str] = Field(default_factory=list)

    def add_node(self, node: Node) -> Node:
        old = self.nodes.get(node.id)
        if old is None:
            self.nodes[node.id] = node
            return node
        merge_node(old, node)
        return old

    def add_edge(self, edge: Edge) -> None:
        k = "\x1f".join(edge.key)
        old = self.edges.get(k)
        if old is None:
            self.edges[k] = edge
        else:
            old.raw_text = old.raw_text or edge.raw_text
            old.flags = sorted(set(old.flags) | set(edge.flags))
            old.titles = list(dict.fromkeys([*old.titles, *edge.titles]))

    def merge(self, other: LKGraph) -> None:
        for n in other.nodes.values():
            self.add_node(n.model_copy(deep=True))
        for e in other.edges.values():
            self.add_edge(e.model_copy(deep=True))
        self.rejected.extend(other.rejected)

    def of_kind(self, *kinds: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.kind in kinds]


def merge_node(old: Node, new: Node) -> None:
    """Fold a re-extracted node into the existing one: keep the first values, fill gaps,
    remember other spellings and types."""
    for f in ("type", "expression", "raw_text", "description", "relation", "operation"):
        if not getattr(old, f) and getattr(new, f):
            setattr(old, f, getattr(new, f))
    if old.value is None:
        old.value = new.value
    old.titles = list(dict.fromkeys([*old.titles, *new.titles]))
    for alias in [new.name, *new.aliases]:
        if alias != old.name and alias not in old.aliases:
            old.aliases.append(alias)
    old.related = list(dict.fromkeys([*old.related, *new.related]))
    old.flags = sorted(set(old.flags) | set(new.flags))


# --- the paper's four Constraint subclasses (Table 1), as a typed view of a node --------


class _ConstraintView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    raw_expression: str = ""
    raw_text: str = ""


class OrderingConstraint(_ConstraintView):
    """Sequencing, time, position, comparison; `relation` names it (LEFT_OF, BEFORE...)."""

    constraint_type: Literal["Ordering"] = "Ordering"
    relation: str = ""


class AllDifferentConstraint(_ConstraintView):
    """Unique assignment; `relation` names what is assigned uniquely (e.g. BOUGHT_IN)."""

    constraint_type: Literal["AllDifferent"] = "AllDifferent"
    relation: str = ""


class ArithmeticConstraint(_ConstraintView):
    """Counts, sums, differences, comparisons with a number, value assignments."""

    constraint_type: Literal["Arithmetic"] = "Arithmetic"
    operation: str = ""
    value: int | float | str | None = None


class GenericConstraint(_ConstraintView):
    constraint_type: Literal["Generic"] = "Generic"


ConstraintView = (
    OrderingConstraint | AllDifferentConstraint | ArithmeticConstraint | GenericConstraint
)
_VIEWS: dict[str, type[_ConstraintView]] = {
    "Ordering": OrderingConstraint,
    "AllDifferent": AllDifferentConstraint,
    "Arithmetic": ArithmeticConstraint,
    "Generic": GenericConstraint,
}


def constraint_view(node: Node) -> ConstraintView:
    """The node as its Table 1 subclass (only the fields that subtype has). A node of an
    unknown type (an old store) reads as Generic; a non-constraint node is a TypeError."""
    if node.kind != "constraint":
        raise TypeError(f"node {node.id} is a {node.kind}, not a constraint")
    cls = _VIEWS.get(node.type, GenericConstraint)
    fields = {f: getattr(node, f) for f in CONSTRAINT_FIELDS.get(node.type, ())}
    view = cls(id=node.id, raw_expression=node.expression, raw_text=node.raw_text, **fields)
    return cast(ConstraintView, view)
