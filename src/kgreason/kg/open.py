"""One call from settings to a KnowledgeGraph, through a registry of backend factories:
"store" (a built store, or the bundled MetaQA KG when `kg.store` is unset), "sparql" (an
endpoint) and "memory" (triple files loaded into a MemoryKG).

`kg.backend` names the backend; left unset it is inferred as older configs meant it
(`sparql_url` set -> sparql, otherwise store), and settings that contradict the chosen
backend are an error naming both keys. A caller adds a backend with `register` on its own
`default_backends()` copy and passes it to `open_kg` (no import-time registration).

`kg.literals` must be the policy the store was built with (its manifest records it), so
that the same settings give the same answers on a store and on an endpoint."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kgreason.kg.base import KGError, KnowledgeGraph
from kgreason.kg.settings import KGSettings

KGFactory = Callable[[KGSettings], KnowledgeGraph]


class KGBackends:
    """Backend name -> factory(settings) -> KnowledgeGraph."""

    def __init__(self) -> None:
        self._factories: dict[str, KGFactory] = {}

    def register(self, name: str, factory: KGFactory) -> KGFactory:
        if name in self._factories:
            raise ValueError(f"KG backend {name!r} is already registered")
        self._factories[name] = factory
        return factory

    def get(self, name: str) -> KGFactory:
        try:
            return self._factories[name]
        except KeyError:
            raise KGError(
                f"kg.backend: unknown backend {name!r}; one of {list(self._factories)}"
            ) from None

    def names(self) -> tuple[str, ...]:
        return tuple(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)


def _open_store(s: KGSettings) -> KnowledgeGraph:
    from kgreason.kg.loaders import literal_policy
    from kgreason.kg.store import StoreKG

    if s.store is None:
        from kgreason.kg.bundled import bundled_store_path

        return StoreKG(bundled_store_path(), noise_prefixes=s.noise_prefixes)
    kg = StoreKG(s.store, noise_prefixes=s.noise_prefixes)
    built = literal_policy(kg.manifest.sources)
    if built is not None and built != s.literals:
        raise KGError(
            f"{s.store}: store built with literal policy {built!r} but kg.literals is "
            f"{s.literals!r}; rebuild it (kgreason kg build --literals {s.literals}) "
            f"or set kg.literals"
        )
    return kg


def _open_sparql(s: KGSettings) -> KnowledgeGraph:
    from kgreason.kg.sparql import SparqlKG  # the SPARQL client is only imported when used

    return SparqlKG.from_settings(s)


def _open_memory(s: KGSettings) -> KnowledgeGraph:
    """Small files only: every triple is held in memory (the loaders' formats)."""
    from kgreason.kg.loaders import Source, load_all
    from kgreason.kg.memory import MemoryKG

    triples, names = load_all([Source(p, literals=s.literals) for p in s.files])
    return MemoryKG(triples, names, noise_prefixes=s.noise_prefixes)


def default_backends() -> KGBackends:
    """A new registry with the built-in backends: store, sparql, memory."""
    reg = KGBackends()
    reg.register("store", _open_store)
    reg.register("sparql", _open_sparql)
    reg.register("memory", _open_memory)
    return reg


def resolve_backend(s: KGSettings) -> str:
    """The backend these settings select; contradictory settings raise KGError."""
    if s.backend is None:
        if s.store is not None and s.sparql_url:
            raise KGError("kg settings: set either store or sparql_url, not both")
        if s.files:
            raise KGError("kg settings: kg.files is read by backend 'memory': set kg.backend")
        return "sparql" if s.sparql_url else "store"
    used = {"store": s.store is not None, "sparql_url": bool(s.sparql_url), "files": bool(s.files)}
    own = {"store": "store", "sparql": "sparql_url", "memory": "files"}.get(s.backend)
    stray = [k for k, v in used.items() if v and k != own]
    if stray:
        raise KGError(f"kg settings: kg.backend is {s.backend!r} but kg.{stray[0]} is set")
    if s.backend == "sparql" and not s.sparql_url:
        raise KGError("kg settings: kg.backend is 'sparql' but kg.sparql_url is not set")
    if s.backend == "memory" and not s.files:
        raise KGError("kg settings: kg.backend is 'memory' but kg.files is empty")
    return s.backend


def open_kg(s: KGSettings, backends: KGBackends | None = None) -> KnowledgeGraph:
    reg = backends or default_backends()
    return reg.get(resolve_backend(s))(s)
