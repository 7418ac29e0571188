"""Session-wide SPARQL servers loaded with the Nijmegen fixtures, and MemoryKG twins.

Servers start once per session, only when a test asks for them, and are stopped at the end.
In CI (CI=true) a server that cannot start fails the tests; locally a missing binary skips.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest
from tests.servers import (
    FREEBASE_NT,
    WIKIDATA_NT,
    RunningServer,
    ServerUnavailable,
    in_ci,
    start_oxigraph,
    start_virtuoso,
)

from kgreason.kg.memory import MemoryKG

FB_NS = "http://rdf.freebase.com/ns/"
WD_ENTITY = "http://www.wikidata.org/entity/"
WD_DIRECT = "http://www.wikidata.org/prop/direct/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"

#: Small on purpose: every query with more rows than this must be paged past the cap.
VIRTUOSO_MAX_ROWS = 7
#: Small on purpose too: OFFSET+LIMIT beyond it makes Virtuoso refuse to sort (SR353).
VIRTUOSO_MAX_SORTED = 20


def _start(factory, *args, **kwargs) -> RunningServer:
    try:
        return factory(*args, **kwargs)
    except ServerUnavailable as exc:
        if in_ci():
            pytest.fail(f"CI requires this server: {exc}")
        pytest.skip(str(exc))
    except Exception as exc:
        pytest.fail(f"server failed to start: {exc}")


@pytest.fixture(scope="session")
def virtuoso(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    server = _start(
        start_virtuoso,
        tmp_path_factory.mktemp("virtuoso"),
        [FREEBASE_NT],
        result_set_max_rows=VIRTUOSO_MAX_ROWS,
        max_sorted_top_rows=VIRTUOSO_MAX_SORTED,
        text_index=True,
    )
    yield server
    server.stop()


@pytest.fixture(scope="session")
def oxigraph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One Oxigraph store with both fixtures (their namespaces do not overlap)."""
    server = _start(start_oxigraph, tmp_path_factory.mktemp("oxigraph"), [FREEBASE_NT, WIKIDATA_NT])
    yield server
    server.stop()


def memory_from_nt(path: Path, dialect: str) -> MemoryKG:
    """The reference KG for a fixture, parsed independently of kgreason.kg.sparql:
    IRI-to-IRI triples become edges (IDs shortened per dialect), English or untagged
    name literals become names (English preferred), other literals are ignored; nameless
    Freebase schema nodes are named by their ID, nameless MIDs stay unnamed."""
    if dialect == "freebase":
        ent_ns, rel_ns, name_preds = FB_NS, FB_NS, {FB_NS + "type.object.name"}
    else:
        ent_ns, rel_ns, name_preds = WD_ENTITY, WD_DIRECT, {RDFS_LABEL}
    triples: list[tuple[str, str, str]] = []
    names: dict[str, tuple[int, str]] = {}
    for q in ox.parse(path=str(path), format=ox.RdfFormat.N_TRIPLES):
        s, p, o = q.subject.value, q.predicate.value, q.object
        if not s.startswith(ent_ns):
            continue
        if isinstance(o, ox.Literal):
            lang = o.language or ""
            if p in name_preds and lang in ("en", ""):
                rank = (0 if lang == "en" else 1, o.value)
                if s[len(ent_ns) :] not in names or rank < names[s[len(ent_ns) :]]:
                    names[s[len(ent_ns) :]] = rank
            continue
        if isinstance(o, ox.NamedNode) and p.startswith(rel_ns) and o.value.startswith(ent_ns):
            triples.append((s[len(ent_ns) :], p[len(rel_ns) :], o.value[len(ent_ns) :]))
    named = {k: v for k, (_, v) in names.items()}
    if dialect == "freebase":  # nameless schema nodes (`location.country`) show their ID
        for t in triples:
            for x in (t[0], t[2]):
                if x not in named and not re.fullmatch(r"[mg]\.[0-9a-z_]+", x):
                    named[x] = x
    return MemoryKG(triples, named, name=str(path))


@pytest.fixture(scope="session")
def freebase_memory() -> MemoryKG:
    return memory_from_nt(FREEBASE_NT, "freebase")


@pytest.fixture(scope="session")
def wikidata_memory() -> MemoryKG:
    return memory_from_nt(WIKIDATA_NT, "wikidata")
