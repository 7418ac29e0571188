"""The MCP tools as docs/mcp.md describes them (an outside review, in process over the warm
service): what the table promises is what a client gets."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp", reason="the server extra (mcp) is not installed")

from mcp.client import Client

from kgreason.server.mcp import build_server
from kgreason.server.service import Service


async def test_kg_search_items_carry_their_match_kind(warm: Service) -> None:
    """docs/mcp.md: items are `id`, `name`, `score`, `kind` (exact / normalized / prefix /
    fuzzy)."""
    async with Client(build_server(warm)) as client:
        r = await client.call_tool("kg_search", {"query": "Lee Tamahori", "limit": 3})
        assert not r.is_error
        items = r.structured_content["items"]
        assert items[0]["id"] == "Lee Tamahori" and items[0]["kind"] == "exact"
        assert {i["kind"] for i in items} <= {"exact", "normalized", "prefix", "fuzzy"}
        r = await client.call_tool("kg_search", {"query": "Lee Tamah", "limit": 3})
        first = r.structured_content["items"][0]
        assert (first["id"], first["kind"]) == ("Lee Tamahori", "prefix")
        tools = {t.name: t for t in (await client.list_tools()).tools}
        schema = tools["kg_search"].output_schema or {}
        assert "kind" in str(schema)


async def test_kg_neighbors_out_of_range_is_a_tool_error(warm: Service) -> None:
    async with Client(build_server(warm)) as client:
        for args in ({"limit": 10**9}, {"limit": 0}, {"offset": -1}):
            r = await client.call_tool("kg_neighbors", {"entity_id": "Lee Tamahori", **args})
            assert r.is_error, args
        past = await client.call_tool(
            "kg_neighbors", {"entity_id": "Lee Tamahori", "offset": 10**12}
        )
        assert not past.is_error and past.structured_content["neighbours"] == []
