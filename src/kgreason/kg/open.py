"""One call from settings to a KnowledgeGraph: a built store, a SPARQL endpoint, or the
bundled MetaQA KG when neither is configured."""

from __future__ import annotations

from kgreason.kg.base import KGError, KnowledgeGraph
from kgreason.kg.settings import KGSettings


def open_kg(s: KGSettings) -> KnowledgeGraph:
    if s.store is not None and s.sparql_url:
        raise KGError("kg settings: set either store or sparql_url, not both")
    if s.store is not None:
        from kgreason.kg.store import StoreKG

        return StoreKG(s.store, noise_prefixes=s.noise_prefixes)
    if s.sparql_url:
        from kgreason.kg.sparql import SparqlKG  # the SPARQL client is only imported when used

        return SparqlKG(
            s.sparql_url,
            dialect=s.dialect,
            timeout_s=s.timeout_s,
            max_retries=s.max_retries,
            page_size=s.page_size,
            noise_prefixes=s.noise_prefixes,
        )
    from kgreason.kg.bundled import bundled_store_path
    from kgreason.kg.store import StoreKG

    return StoreKG(bundled_store_path(), noise_prefixes=s.noise_prefixes)
