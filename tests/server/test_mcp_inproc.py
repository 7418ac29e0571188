"""The MCP tools in process (the SDK's client connected to the MCPServer directly) over the
warm service of the server tests: what the service refuses under load, a deadline, or an
LLM that fails comes back as a tool error naming it, and the next call is served."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the server extra (mcp) is not installed")

from mcp.client import Client
from mcp.shared.exceptions import MCPError

from kgreason.server.mcp import ResultCache, build_server
from kgreason.server.service import Service
from tests.server.conftest import GATED_QUESTION
from tests.server.doubles import GatedLLM

Gated = Callable[..., tuple[Service, GatedLLM]]


def text_of(r: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in r.content)


async def _entered(llm: GatedLLM) -> None:
    for _ in range(500):
        if llm.entered.is_set():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the question never reached the LLM")


async def test_busy_and_llm_errors_are_tool_errors(gated: Gated) -> None:
    svc, llm = gated(max_concurrency=1)
    async with Client(build_server(svc)) as client:
        first = asyncio.ensure_future(client.call_tool("ask", GATED_QUESTION))
        await _entered(llm)
        busy = await client.call_tool("ask", GATED_QUESTION)
        assert busy.is_error and text_of(busy).startswith("Error executing tool ask: busy:")
        llm.release()
        failed = await first  # the double fails every call as an unreadable reply
        assert failed.is_error and "llm-unreadable-reply" in text_of(failed)
        ok = await client.call_tool("kg_search", {"query": "Lee Tamahori", "limit": 1})
        assert not ok.is_error


async def test_a_question_over_the_deadline_is_one_tool_error(gated: Gated) -> None:
    svc, llm = gated(deadline_s=0.3)
    try:
        async with Client(build_server(svc)) as client:
            r = await client.call_tool("ask", GATED_QUESTION)
            assert r.is_error and "deadline" in text_of(r) and "0.3 s" in text_of(r)
            assert svc.inflight == 0  # the cancelled question released its slot
            free = await client.call_tool("ask", {**GATED_QUESTION, "llm_free": True})
            assert not free.is_error and free.structured_content["llm_free"] is True
    finally:
        llm.release()


async def test_results_are_kept_per_server_and_the_oldest_dropped(warm: Service) -> None:
    cache = ResultCache(capacity=2)
    async with Client(build_server(warm, results=cache)) as client:
        ids = []
        for q in (
            "who directed [Once Were Warriors]",
            "who wrote [The Edge]",
            "who directed [Next]",
        ):
            r = await client.call_tool("ask", {"question": q})
            assert not r.is_error, text_of(r)
            ids.append(r.structured_content["result_id"])
        gone = await client.call_tool("explain_answer", {"result_id": ids[0]})
        assert gone.is_error and "older than the last 2 results" in text_of(gone)
        kept = await client.call_tool("explain_answer", {"result_id": ids[2]})
        assert not kept.is_error and kept.structured_content["question"] == "who directed [Next]"
    async with Client(build_server(warm)) as other:  # another server does not see them
        r = await other.call_tool("explain_answer", {"result_id": ids[2]})
        assert r.is_error and "unknown result_id" in text_of(r)


async def test_a_call_the_client_gives_up_on_is_cancelled_and_frees_its_slot(gated: Gated) -> None:
    svc, llm = gated(max_concurrency=1)
    try:
        async with Client(build_server(svc)) as client:
            with pytest.raises(MCPError, match="Timed out"):
                await client.call_tool("ask", GATED_QUESTION, read_timeout_seconds=0.5)
            assert llm.entered.is_set()  # the question was running, waiting on the LLM
            for _ in range(300):  # the client's cancellation reaches the server's task
                if svc.inflight == 0:
                    break
                await asyncio.sleep(0.01)
            assert svc.inflight == 0
            # the slot is free again: the next question runs (LLM-free, so it completes)
            r = await client.call_tool("ask", {**GATED_QUESTION, "llm_free": True})
            assert not r.is_error
    finally:
        llm.release()
