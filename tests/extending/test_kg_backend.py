"""`kg.backend`: the built-in factories, old configs inferred, conflicts named, and the
"add a KG backend" recipe (a factory plus one registration line)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import ValidationError

from kgreason.kg.base import KGError, KnowledgeGraph
from kgreason.kg.memory import MemoryKG
from kgreason.kg.open import default_backends, open_kg, resolve_backend
from kgreason.kg.settings import KGSettings


def write_tsv(tmp_path: Path) -> Path:
    p = tmp_path / "kb.tsv"
    p.write_text("Nijmegen\tnear\tWeeze\nWeeze\tin\tGermany\n", encoding="utf-8")
    return p


def test_memory_backend_loads_files(tmp_path):
    kg = open_kg(KGSettings(backend="memory", files=[write_tsv(tmp_path)]))
    assert isinstance(kg, MemoryKG)
    nb = asyncio.run(kg.neighbors(["Weeze"]))["Weeze"]
    assert {(n.entity, n.relation) for n in nb} == {("Nijmegen", "near"), ("Germany", "in")}


@pytest.mark.parametrize(
    ("kw", "backend"),
    [({}, "store"), ({"store": "x"}, "store"), ({"sparql_url": "http://h/sparql"}, "sparql")],
)
def test_old_configs_infer_the_backend(kw, backend):
    assert resolve_backend(KGSettings(**kw)) == backend


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"store": "x", "sparql_url": "http://h/sparql"}, "not both"),
        ({"backend": "store", "sparql_url": "http://h/sparql"}, "kg.sparql_url is set"),
        ({"backend": "sparql", "store": "x", "sparql_url": "u"}, "kg.store is set"),
        ({"backend": "sparql"}, "kg.sparql_url is not set"),
        ({"backend": "memory"}, "kg.files is empty"),
        ({"files": ["a.tsv"]}, "set kg.backend"),
        ({"backend": "store", "files": ["a.tsv"]}, "kg.files is set"),
    ],
)
def test_conflicting_settings_are_named(kw, message):
    with pytest.raises(KGError, match=message):
        open_kg(KGSettings(**kw))


def test_settings_check_the_backend_name_and_open_kg_checks_the_registry():
    """Settings are data: a backend name is checked for its form only; the registry that
    opens the KG decides whether it is known."""
    with pytest.raises(ValidationError, match="not a KG backend name"):
        KGSettings(backend="neo 4j; rm")
    s = KGSettings(backend="neo4j")
    with pytest.raises(KGError, match="unknown backend 'neo4j'"):
        open_kg(s)


def test_a_registered_backend_opens(tmp_path):
    def open_toy(s: KGSettings) -> KnowledgeGraph:  # the recipe's factory
        return MemoryKG([("a", "r", "b")], name="toy")

    backends = default_backends()
    backends.register("toy", open_toy)  # the one registration line
    s = KGSettings(backend="toy")
    kg = open_kg(s, backends)
    assert kg.name == "toy"
    with pytest.raises(KGError, match="unknown backend 'toy'"):
        open_kg(s)  # the default registry does not have it
