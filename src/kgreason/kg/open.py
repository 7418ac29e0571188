"""One call from settings to a KnowledgeGraph: a built store, a SPARQL endpoint, or the
bundled MetaQA KG when neither is configured.

`kg.literals` must be the policy the store was built with (its manifest records it), so
that the same settings give the same answers on a store and on an endpoint."""

from __future__ import annotations

from kgreason.kg.base import KGError, KnowledgeGraph
from kgreason.kg.settings import KGSettings


def open_kg(s: KGSettings) -> KnowledgeGraph:
    if s.store is not None and s.sparql_url:
        raise KGError("kg settings: set either store or sparql_url, not both")
    if s.store is not None:
        from kgreason.kg.loaders import literal_policy
        from kgreason.kg.store import StoreKG

        kg = StoreKG(s.store, noise_prefixes=s.noise_prefixes)
        built = literal_policy(kg.manifest.sources)
        if built is not None and built != s.literals:
            raise KGError(
                f"{s.store}: store built with literal policy {built!r} but kg.literals is "
                f"{s.literals!r}; rebuild it (kgreason kg build --literals {s.literals}) "
                f"or set kg.literals"
            )
        return kg
    if s.sparql_url:
        from kgreason.kg.sparql import SparqlKG  # the SPARQL client is only imported when used

        return SparqlKG.from_settings(s)
    from kgreason.kg.bundled import bundled_store_path
    from kgreason.kg.store import StoreKG

    return StoreKG(bundled_store_path(), noise_prefixes=s.noise_prefixes)
