"""What the pipelines need from a knowledge graph, independent of where it lives.

PoG reads a KG through a handful of operations (paper section 4.1, Appendix D): names of
entities (D(.)), 1-hop neighbours with direction (D.1/D.3), k-hop expansion around the topic
entities (subgraph detection) and entity search for linking. The embedded store and the
SPARQL endpoints implement exactly this, so a pipeline never knows which one it runs on.

Identifiers are strings in the backend's own syntax (Freebase MIDs such as `m.0x2b`,
Wikidata `Q42`, or the local store's node names); names are what D(.) returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Self, runtime_checkable

#: Shown for nodes with no name (Freebase CVTs), as PoG does; the ID is kept beside it.
UNNAMED = "Unnamed Entity"


@dataclass(frozen=True, order=True, slots=True)
class Triple:
    head: str
    relation: str
    tail: str


@dataclass(frozen=True, slots=True)
class Neighbor:
    """One edge seen from a seed entity.

    `direction` follows Appendix D.1: "tail" means the neighbour is the tail (seed -r-> entity),
    "head" means the neighbour is the head (entity -r-> seed).
    """

    entity: str
    relation: str
    direction: Literal["head", "tail"]

    def triple(self, seed: str) -> Triple:
        if self.direction == "tail":
            return Triple(seed, self.relation, self.entity)
        return Triple(self.entity, self.relation, seed)


@dataclass
class Subgraph:
    """Triples around some seeds. `truncated` is True when a fetch bound stopped expansion,
    with `truncation_reason` saying which bound: callers must report it, never hide it."""

    seeds: list[str]
    triples: list[Triple] = field(default_factory=list)
    depth: int = 0
    truncated: bool = False
    truncation_reason: str = ""

    def entities(self) -> set[str]:
        out: set[str] = set(self.seeds)
        for t in self.triples:
            out.add(t.head)
            out.add(t.tail)
        return out


@dataclass(frozen=True)
class EntityMatch:
    id: str
    name: str
    #: "exact", "normalized" (case/diacritic-insensitive) or "fuzzy"
    kind: str
    score: float = 1.0


class KGError(Exception):
    """Base of KG errors; the message names the store or endpoint."""


class UnknownEntityError(KGError):
    """An entity ID that the KG does not contain."""


class InvalidIdentifierError(KGError):
    """An ID that fails the dialect's syntax check (guards against SPARQL injection)."""


@runtime_checkable
class KnowledgeGraph(Protocol):
    """The operations every KG backend provides. All are async so that network endpoints
    and the in-process store share one interface; the store's methods do not block."""

    #: Human-readable identity: a store path or an endpoint URL.
    name: str

    async def names(self, ids: Sequence[str]) -> dict[str, str]:
        """D(.) for a batch: id -> name; unnamed nodes map to UNNAMED; unknown ids are absent."""
        ...

    async def neighbors(
        self, ids: Sequence[str], *, limit_per_entity: int | None = None
    ) -> dict[str, list[Neighbor]]:
        """1-hop neighbours of each id (both directions), noise relations filtered."""
        ...

    async def expand(self, seeds: Sequence[str], depth: int, *, max_triples: int) -> Subgraph:
        """All triples within `depth` hops of any seed, stopping (and saying so) at max_triples."""
        ...

    async def search(
        self, text: str, *, limit: int = 10, fuzzy: bool = True, prefix: bool = False
    ) -> list[EntityMatch]:
        """Entities whose name matches `text`: exact first, then case/diacritic-insensitive,
        then (if prefix: type-ahead) names `text` begins, shortest first, then (if fuzzy)
        approximate matches, best first. A backend without prefix search ignores `prefix`."""
        ...

    async def contains(self, triples: Sequence[Triple]) -> list[bool]:
        """Whether each triple is in the KG (for the faithfulness check of cited paths)."""
        ...

    def fingerprint(self) -> str:
        """A stable identity of the KG's content (store hash or endpoint URL + dialect)."""
        ...

    async def aclose(self) -> None:
        """Release what the backend holds (HTTP connections, memory maps); idempotent."""
        ...

    def close(self) -> None:
        """`aclose` for code without an event loop."""
        ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: Any) -> None: ...


class Closeable:
    """`close`/`aclose` and both context managers for a KG backend, so callers write
    `async with open_kg(s) as kg:` (or `with`) on any backend instead of probing for a
    closer. Backends override `close` (sync resources) or `aclose` (async ones)."""

    def close(self) -> None:
        return None

    async def aclose(self) -> None:
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class ClosedKG:
    """Stands in for a closed backend's internals: any use is a KGError naming the KG,
    not an AttributeError or a read of unmapped memory."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        raise KGError(f"{self._name}: the knowledge graph was closed")


def is_noise_relation(relation: str, prefixes: Sequence[str]) -> bool:
    """Whether `relation` is one of `prefixes` (ToG's Freebase bookkeeping list, `kg.noise_filter =
    "tog"`; PoG's Appendix D queries filter nothing, the default)."""
    rel = relation.rsplit("/", 1)[-1]
    return any(rel.startswith(p) or relation.startswith(p) for p in prefixes)
