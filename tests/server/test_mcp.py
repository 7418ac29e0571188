"""`kgreason mcp` end to end: the SDK's own client spawns `python -m kgreason mcp` over stdio
(the source tree on PYTHONPATH, the bundled KG, LLM-free) and calls every tool, the bad
inputs and the attacks included. Each test starts its own server, so one test's failure
cannot leave state for the next."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the server extra (mcp) is not installed")

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

pytestmark = pytest.mark.integration  # each test starts a real server process

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
TOOLS = {"ask", "solve", "kg_search", "kg_neighbors", "explain_answer"}
QUESTION = "who directed [Once Were Warriors]"


def server_args(*extra: str) -> list[str]:
    return ["-m", "kgreason", "mcp", "--llm-free", *extra]


@asynccontextmanager
async def connect(*extra: str) -> AsyncIterator[Client]:
    # Only PYTHONPATH is added to the SDK's safe default environment: no OPENAI_* reaches
    # the server, so it could not call an LLM even without --llm-free.
    params = StdioServerParameters(
        command=sys.executable, args=server_args(*extra), env={"PYTHONPATH": str(SRC)}, cwd=ROOT
    )
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


def text_of(result: CallToolResult) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def test_lists_the_five_tools_with_typed_schemas() -> None:
    async with connect() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    ask = tools["ask"]
    props = ask.input_schema["properties"]
    assert ask.input_schema["required"] == ["question"]
    assert props["question"]["type"] == "string" and props["question"]["maxLength"] == 2000
    assert props["max_paths"]["maximum"] == 50
    assert ask.output_schema is not None
    assert {"answers", "paths", "llm_free", "label", "result_id"} <= set(
        ask.output_schema["properties"]
    )
    neighbours = tools["kg_neighbors"].input_schema
    assert neighbours["required"] == ["entity_id"]
    assert neighbours["properties"]["offset"]["type"] == "integer"
    for name in TOOLS:  # every tool declares a description (dedented) and structured output
        assert tools[name].description and tools[name].output_schema, name
        assert "\n " not in tools[name].description, name


async def test_ask_returns_labelled_candidates_with_paths_then_explains_them() -> None:
    async with connect() as client:
        progress: list[str] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append(message or "")

        r = await client.call_tool(
            "ask", {"question": QUESTION, "max_paths": 3}, progress_callback=on_progress
        )
        assert not r.is_error, text_of(r)
        out: dict[str, Any] = r.structured_content
        assert out["llm_free"] is True and out["mode"] == "llm-free"
        assert "LLM-free" in out["label"] and "not" in out["label"]
        names = {a["name"] for a in out["answers"]} | {c["name"] for c in out["candidates"]}
        assert "Lee Tamahori" in names
        assert [t["id"] for t in out["topic_entities"]] == ["Once Were Warriors"]
        assert 1 <= len(out["paths"]) <= 3 <= out["paths_total"]
        first = out["paths"][0]
        assert first["text"].startswith("Once Were Warriors -")
        hop = first["hops"][0]
        assert hop["triples"] and hop["triples_total"] >= len(hop["triples"])
        # Each finished stage arrived as a progress notification, with its sizes.
        assert any(m.startswith("pog.") and "paths=" in m for m in progress), progress
        # The unstructured content carries the same JSON, for clients without structured output.
        assert json.loads(r.content[0].text)["result_id"] == out["result_id"]

        e = await client.call_tool("explain_answer", {"result_id": out["result_id"]})
        assert not e.is_error, text_of(e)
        ex = e.structured_content
        assert ex["result_id"] == out["result_id"] and ex["llm_free"] is True
        assert ex["triples"] and ex["verified"] + ex["unverified"] == len(ex["triples"])
        directed = {"head": "Once Were Warriors", "relation": "directed_by", "tail": "Lee Tamahori"}
        cited = [{k: t[k] for k in ("head", "relation", "tail")} for t in ex["triples"]]
        assert directed in cited
        # Every triple on a path read from the KG is in the KG.
        assert all(t["verified"] for t in ex["triples"])

        fresh = await client.call_tool("explain_answer", {"question": QUESTION})
        assert not fresh.is_error and fresh.structured_content["result_id"] != out["result_id"]

        films = await client.call_tool(
            "explain_answer", {"question": "what films did [Lee Tamahori] direct", "limit": 5}
        )
        page = films.structured_content
        assert len(page["triples"]) == 5 < page["triples_total"]
        assert page["verified"] + page["unverified"] == page["triples_total"]
        answer_ids = {a["id"] for a in page["answers"]}
        assert answer_ids and all(
            t["head"] in answer_ids or t["tail"] in answer_ids for t in page["triples"]
        )


async def test_kg_search_and_neighbours() -> None:
    async with connect() as client:
        s = await client.call_tool("kg_search", {"query": "Once Were Warriors", "limit": 5})
        assert not s.is_error, text_of(s)
        items = s.structured_content["items"]
        assert 1 <= len(items) <= 5 and items[0]["id"] == "Once Were Warriors"
        assert all(isinstance(i["score"], float) for i in items)

        n = await client.call_tool("kg_neighbors", {"entity_id": "Once Were Warriors", "limit": 3})
        assert not n.is_error, text_of(n)
        page = n.structured_content
        assert page["id"] == "Once Were Warriors" and len(page["neighbours"]) == 3
        assert page["total"] > 3 and page["next_offset"] == 3
        rest = await client.call_tool(
            "kg_neighbors", {"entity_id": "Once Were Warriors", "offset": 3, "limit": 200}
        )
        everything = page["neighbours"] + rest.structured_content["neighbours"]
        assert len(everything) == page["total"]
        assert {
            "relation": "directed_by",
            "direction": "out",
            "id": "Lee Tamahori",
            "name": "Lee Tamahori",
        } in everything


async def test_bad_input_is_a_tool_error_and_the_server_goes_on() -> None:
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("kg_neighbors", {"entity_id": "No Such Film 1999 xyz"}, "No Such Film 1999 xyz"),
        ("ask", {"question": ""}, "question"),
        ("ask", {"question": "   "}, "empty"),
        ("ask", {"question": "who directed [No Such Film 1999 xyz]"}, "No Such Film"),
        ("ask", {"question": QUESTION, "max_paths": 0}, "max_paths"),
        ("kg_search", {"query": ""}, "query"),
        ("explain_answer", {"result_id": "deadbeef"}, "unknown result_id"),
        ("explain_answer", {}, "exactly one"),
        ("solve", {"context": "All men are mortal.", "question": "Is Socrates mortal?"}, "LLM"),
        ("solve", {}, "program"),
        ("no_such_tool", {}, "no_such_tool"),
    ]
    async with connect() as client:
        for tool, args, needle in bad:
            r = await client.call_tool(tool, args)
            assert r.is_error, (tool, args, r.structured_content)
            assert needle.lower() in text_of(r).lower(), (tool, text_of(r))
            assert "Traceback" not in text_of(r)
            # ...and the server still answers.
            ok = await client.call_tool("kg_search", {"query": "Lee Tamahori", "limit": 1})
            assert not ok.is_error and ok.structured_content["items"][0]["id"] == "Lee Tamahori"


async def test_solve_runs_a_program_without_an_llm() -> None:
    smt = "(declare-const x Int)\n(assert (> x 2))\n(assert (< x 4))\n(check-sat)\n"
    async with connect() as client:
        r = await client.call_tool("solve", {"program": smt})
        if r.is_error and "z3" in text_of(r).lower() and "not" in text_of(r).lower():
            pytest.skip(f"z3 is not available here: {text_of(r)}")
        assert not r.is_error, text_of(r)
        out = r.structured_content
        assert out["verdict"] == "sat" and out["route"] == "z3"
        assert out["model"] == {"x": "3"}  # the only model: the solver really ran
        bad = await client.call_tool("solve", {"program": "(assert"})
        assert bad.is_error and "parse" in text_of(bad).lower()


async def test_huge_arguments_are_refused_cleanly_and_the_server_goes_on() -> None:
    # 10 MB: over the transport's per-message bound (8 MiB), refused as a JSON-RPC error for
    # that request while the line streams past, never held whole.
    huge = "who directed " + "x" * (10 * 1024 * 1024)
    # 1 MB: under it, so the tool's own argument schema refuses it (a tool error).
    large = "who directed " + "x" * (1024 * 1024)
    async with connect() as client:
        with pytest.raises(MCPError, match="refused: the limit is 8388608 bytes"):
            await client.call_tool("ask", {"question": huge})
        ok = await client.call_tool("kg_search", {"query": "Lee Tamahori", "limit": 1})
        assert not ok.is_error and ok.structured_content["items"][0]["id"] == "Lee Tamahori"

        r = await client.call_tool("ask", {"question": large})
        assert r.is_error and "at most 2000 characters" in text_of(r)
        assert len(text_of(r)) < 2000  # the refusal does not echo the question back
        r = await client.call_tool("ask", {"question": QUESTION, "topics": ["t"] * 1000})
        assert r.is_error and "topics" in text_of(r)
        ok = await client.call_tool("kg_search", {"query": "Lee Tamahori", "limit": 1})
        assert not ok.is_error


class RawSession:
    """The server driven by hand, one JSON-RPC line at a time, to see exactly what it
    writes on stdout. A timer kills it if a reply never comes."""

    def __init__(self, *extra: str) -> None:
        self.err = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, *server_args(*extra)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
            cwd=ROOT,
        )
        self.timer = threading.Timer(120, self.proc.kill)
        self.timer.start()

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, self.stderr()
        reply: dict[str, Any] = json.loads(line)  # every line on stdout is JSON-RPC
        return reply

    def stderr(self) -> str:
        self.err.seek(0)
        return self.err.read().decode(errors="replace")[-2000:]

    def close(self) -> tuple[int, bytes]:
        """Close stdin (the client leaves): the server ends; its exit code, what remained."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        code = self.proc.wait()
        self.timer.cancel()
        self.proc.stdout.close()
        self.err.close()
        return code, rest


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_stdout_carries_only_protocol_messages() -> None:
    s = RawSession("--max-message-mb", "1")
    try:
        s.send(INIT)
        assert s.read()["id"] == 1
        s.send(INITIALIZED)
        s.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "ask", "arguments": {"question": QUESTION}},
            }
        )
        reply = s.read()
        assert reply["id"] == 2 and reply["result"]["structuredContent"]["llm_free"] is True
        # 2 MB of garbage with no id: refused (id null) without being kept, then served on.
        s.send(b"x" * (2 * 1024 * 1024) + b"\n")
        refused = s.read()
        assert refused["id"] is None and "refused" in refused["error"]["message"]
        # Not JSON, and JSON nested past the parser's limit: answered, not dropped (the SDK
        # alone would drop both and leave a client waiting on id 4).
        s.send(b"not json\n")
        assert s.read()["error"]["code"] == -32700
        deep = b"[" * 5000 + b"]" * 5000
        s.send(b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":' + deep + b"}\n")
        nested = s.read()
        assert nested["id"] == 4 and "recursion" in nested["error"]["message"]
        s.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        assert len(s.read()["result"]["tools"]) == 5
    finally:
        code, rest = s.close()
    assert code == 0 and rest == b""


def test_a_bad_kg_ends_the_command_with_one_line_and_nothing_on_stdout(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, *server_args("--kg", str(tmp_path / "missing"))],
        capture_output=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )
    assert r.returncode != 0 and r.stdout == b""
    err = r.stderr.decode().strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: knowledge graph:") and "missing" in err[0]


def test_without_the_sdk_the_command_names_the_extra(tmp_path: Path) -> None:
    shadow = tmp_path / "mcp"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('No module named mcp (shadowed)')\n")
    r = subprocess.run(
        [sys.executable, *server_args()],
        capture_output=True,
        env={"PYTHONPATH": f"{tmp_path}:{SRC}", "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )
    assert r.returncode == 1 and r.stdout == b""
    assert "pip install 'kgreason[server]'" in r.stderr.decode()
