"""Every KG backend closes the same way: `aclose()`/`close()` and `async with`/`with`,
so callers never probe for a closer. A closed store fails with a KGError naming it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kgreason import KGError, KnowledgeGraph, MemoryKG, SparqlKG, StoreKG, open_kg
from kgreason.kg.loaders import Source
from kgreason.kg.settings import KGSettings
from kgreason.kg.store import build_store
from tests.pog.test_e2e_nijmegen import FIXTURE, NIJMEGEN

DEAD_ENDPOINT = "http://127.0.0.1:9/sparql"  # nothing listens; never contacted here


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kg") / "nijmegen"
    build_store([Source(FIXTURE, "nt")], out)
    return out


def test_every_backend_is_a_knowledge_graph_with_closers(store: Path) -> None:
    kgs = [MemoryKG([("a", "r", "b")]), StoreKG(store), SparqlKG(DEAD_ENDPOINT)]
    for kg in kgs:
        assert isinstance(kg, KnowledgeGraph), type(kg).__name__
        for name in ("aclose", "close", "__aenter__", "__aexit__", "__enter__", "__exit__"):
            assert callable(getattr(kg, name)), (type(kg).__name__, name)


async def test_store_async_with_closes_and_later_use_names_the_store(store: Path) -> None:
    async with open_kg(KGSettings(store=store)) as kg:
        assert await kg.names([NIJMEGEN]) == {NIJMEGEN: "Nijmegen"}
    with pytest.raises(KGError, match=f"{store}.*closed"):
        await kg.neighbors([NIJMEGEN])
    with pytest.raises(KGError, match="closed"):
        await kg.search("Nijmegen")
    await kg.aclose()  # idempotent


def test_store_sync_with(store: Path) -> None:
    with StoreKG(store) as kg:
        assert asyncio.run(kg.contains([])) == []
    with pytest.raises(KGError, match="closed"):
        asyncio.run(kg.names([NIJMEGEN]))


async def test_memory_kg_closes_as_a_no_op() -> None:
    async with MemoryKG([("a", "r", "b")]) as kg:
        assert await kg.names(["a"]) == {"a": "a"}
    assert await kg.names(["a"]) == {"a": "a"}  # nothing was released


async def test_sparql_aclose_drops_the_http_client_and_close_in_a_loop_points_to_aclose():
    kg = SparqlKG(DEAD_ENDPOINT)
    async with kg:
        await kg._client._client()  # the pooled httpx client, created on first use
        assert kg._client._owned._client is not None
    assert kg._client._owned._client is None
    with pytest.raises(KGError, match="aclose"):
        kg.close()


def test_sparql_close_from_sync_code() -> None:
    kg = SparqlKG(DEAD_ENDPOINT)
    with kg:
        pass
    kg.close()  # twice is fine
