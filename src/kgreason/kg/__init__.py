"""Knowledge-graph access: one interface over the embedded store and SPARQL endpoints."""

from kgreason.kg.base import (
    EntityMatch,
    KGError,
    KnowledgeGraph,
    Neighbor,
    Subgraph,
    Triple,
    UnknownEntityError,
)

__all__ = [
    "EntityMatch",
    "KGError",
    "KnowledgeGraph",
    "Neighbor",
    "Subgraph",
    "Triple",
    "UnknownEntityError",
]
