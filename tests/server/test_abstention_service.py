"""An out-of-KG question abstains through the service and the MCP tool as through `ask`
(tests/pog/test_abstention.py)."""

from __future__ import annotations

import asyncio

from tests.pog.test_abstention import ANSWERABLE, OUT_OF_KG


def test_service_and_mcp_say_abstained(warm):
    from kgreason.server.mcp_models import ask_output
    from kgreason.server.models import AskRequest

    out = asyncio.run(warm.ask(AskRequest(question=OUT_OF_KG), lambda e: None))
    assert out["abstained"] is True and out["answers"] == [] and out["candidates"]
    mcp = ask_output(out, "r1", 5)
    assert mcp.abstained and mcp.answers == [] and mcp.candidates
    ok = asyncio.run(warm.ask(AskRequest(question=ANSWERABLE), lambda e: None))
    assert ok["abstained"] is False and ask_output(ok, "r2", 5).answers
