"""Typed LKG data: what the extraction LLM returns (validated on arrival) and the graph it
becomes (paper Table 1: Entity, Concept, Rule and Constraint nodes, typed edges).

The raw models accept the spellings models actually produce ("Name"/"name",
"Constriant_type" as in the paper's own prompt) so that one odd key does not throw away an
otherwise good extraction; values are still checked.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NodeKind = Literal["entity", "concept", "rule", "constraint"]
ConstraintType = Literal["Ordering", "AllDifferent", "Arithmetic", "Generic"]
CONSTRAINT_TYPES: tuple[str, ...] = ("Ordering", "AllDifferent", "Arithmetic", "Generic")
LOGIC_KINDS = ("rule", "constraint")

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

    _strip = field_validator("expression", "raw_text", "description", mode="before")(_as_str)

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

    def content(self) -> str:
        """The text a reader (pruner, codegen, BM25, embedder) sees for this node."""
        if self.kind in LOGIC_KINDS:
            parts = [self.raw_text or self.description, self.expression]
            return " | ".join(p for p in parts if p)
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
    for f in ("type", "expression", "raw_text", "description"):
        if not getattr(old, f) and getattr(new, f):
            setattr(old, f, getattr(new, f))
    for alias in [new.name, *new.aliases]:
        if alias != old.name and alias not in old.aliases:
            old.aliases.append(alias)
    old.related = list(dict.fromkeys([*old.related, *new.related]))
    old.flags = sorted(set(old.flags) | set(new.flags))
