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
    "SparqlKG",
    "StoreKG",
    "Subgraph",
    "Triple",
    "UnknownEntityError",
    "open_kg",
]


def __getattr__(name: str) -> object:
    # The store pulls in numpy; import it only when asked for (keeps `kgreason.kg` light).
    if name == "StoreKG":
        from kgreason.kg.store import StoreKG

        return StoreKG
    if name == "SparqlKG":
        from kgreason.kg.sparql import SparqlKG

        return SparqlKG
    if name == "open_kg":
        from kgreason.kg.open import open_kg

        return open_kg
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
