"""`kgreason mcp` with an LLM: a real OpenAI-protocol server on loopback (the test double
that answers each PoG stage from its prompt) and a KG store built from the Nijmegen fixture.
PoG's own answer comes back unlabelled, with its usage; an LLM that replies nonsense is a
tool error naming the stage, and the server goes on."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the server extra (mcp) is not installed")

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from typer.testing import CliRunner

from kgreason.cli import app
from tests.pog.test_cli_ask import PromptServer
from tests.pog.test_e2e_nijmegen import FIXTURE, FRANCE, GERMANY, NIJMEGEN, QUESTION, script

pytestmark = pytest.mark.integration  # a server process and a local OpenAI-protocol server

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kg") / "nijmegen"
    r = CliRunner().invoke(app, ["kg", "build", str(FIXTURE), "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    return out


@asynccontextmanager
async def connect(store: Path, llm: PromptServer, cwd: Path) -> AsyncIterator[Client]:
    env = {
        "PYTHONPATH": str(SRC),
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "test",
        "KGREASON_LLM__MAX_RETRIES": "0",
        "KGREASON_LLM__CACHE": "false",
        "KGREASON_EMBED__BACKEND": "static",
    }
    args = ["-m", "kgreason", "mcp", "--kg", str(store)]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=cwd)
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


def _llm(stages: dict[str, Any]) -> PromptServer:
    srv = PromptServer(stages).start()
    srv.plan = [("fn", None)] * 60
    return srv  # type: ignore[return-value]


async def test_pog_answer_comes_back_unlabelled_with_usage(store: Path, tmp_path: Path) -> None:
    llm = _llm(script())
    try:
        async with connect(store, llm, tmp_path) as client:
            r = await client.call_tool("ask", {"question": QUESTION})
            assert not r.is_error, r.content
            out = r.structured_content
            assert out["mode"] == "pog" and out["llm_free"] is False and out["label"] is None
            assert [a["id"] for a in out["answers"]] == [GERMANY]
            assert out["usage"]["question_analysis"]["calls"] == 1
            assert out["paths"] and out["unverified_triples"] == []
            # Freebase ids are shown by name in the path text, and their names are given.
            assert out["entity_names"][NIJMEGEN] == "Nijmegen"
            assert any("Nijmegen" in p["text"] for p in out["paths"])
            assert not any(NIJMEGEN in p["text"] for p in out["paths"])
            e = await client.call_tool("explain_answer", {"result_id": out["result_id"]})
            assert not e.is_error and e.structured_content["llm_free"] is False
            assert e.structured_content["unverified"] == 0 and e.structured_content["triples"]
            # the same server in LLM-free mode for one call, when asked
            free = await client.call_tool("ask", {"question": QUESTION, "llm_free": True})
            assert not free.is_error and free.structured_content["llm_free"] is True
    finally:
        llm.close()
    assert len(llm.requests) >= 2  # PoG really called the LLM


async def test_unreadable_llm_replies_are_a_tool_error(store: Path, tmp_path: Path) -> None:
    llm = _llm({s: ["I am not sure."] for s in script()})
    try:
        async with connect(store, llm, tmp_path) as client:
            args = {"question": QUESTION, "topics": [NIJMEGEN, FRANCE]}
            r = await client.call_tool("ask", args)
            text = " ".join(getattr(c, "text", "") for c in r.content)
            assert r.is_error and "llm-unreadable-reply" in text and "question_analysis" in text
            ok = await client.call_tool("kg_neighbors", {"entity_id": NIJMEGEN, "limit": 1})
            assert not ok.is_error and ok.structured_content["id"] == NIJMEGEN
    finally:
        llm.close()
