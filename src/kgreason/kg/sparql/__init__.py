"""The KnowledgeGraph interface over SPARQL endpoints (Freebase, Wikidata, generic IRIs)."""

from kgreason.kg.sparql.client import (
    RetryPolicy,
    SparqlBadResponseError,
    SparqlClient,
    SparqlEndpointError,
    SparqlHTTPError,
    SparqlTimeoutError,
    SparqlUnavailableError,
)
from kgreason.kg.sparql.dialects import DIALECTS, Dialect, get_dialect
from kgreason.kg.sparql.kg import SparqlKG

__all__ = [
    "DIALECTS",
    "Dialect",
    "RetryPolicy",
    "SparqlBadResponseError",
    "SparqlClient",
    "SparqlEndpointError",
    "SparqlHTTPError",
    "SparqlKG",
    "SparqlTimeoutError",
    "SparqlUnavailableError",
    "get_dialect",
]
