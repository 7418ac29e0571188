"""The MCP layer's parts without a server process: the bounded stdio reader, the request id
found in an oversize message, and the shaping of results into the tools' typed outputs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the server extra (mcp) is not installed")

from mcp_types import INVALID_REQUEST, PARSE_ERROR

from kgreason.server.mcp_models import ask_output, path_out, path_text, solve_output
from kgreason.server.mcp_stdio import BoundedLines, request_id


class CountingStream(io.BytesIO):
    """Records the largest single read, to show an oversize line is never read whole."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.largest = 0

    def readline(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        line = super().readline(size)
        self.largest = max(self.largest, len(line))
        return line


async def _collect(data: bytes, limit: int) -> tuple[list[str], list[tuple[Any, int, str]], int]:
    stream = CountingStream(data)
    lines = BoundedLines(stream, limit)
    refused: list[tuple[Any, int, str]] = []

    async def refuse(rid: Any, code: int, message: str) -> None:
        refused.append((rid, code, message))

    lines.refuse = refuse
    return [line async for line in lines], refused, stream.largest


def msg(i: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}).encode() + b"\n"


async def test_bounded_lines_pass_short_lines_and_skip_a_long_one_in_chunks() -> None:
    big = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"q":"' + b"z" * 500_000 + b'"}}'
    data = msg(1) + big + b"\n" + msg(2)
    got, refused, largest = await _collect(data, 1000)
    assert got == [msg(1).decode(), msg(2).decode()]  # the one after the long one is read
    assert refused == [
        (
            7,
            INVALID_REQUEST,
            f"message of {len(big) + 1} bytes refused: the limit is 1000 bytes per message",
        )
    ]
    assert largest <= 1 << 16  # drained chunk by chunk, never held whole


async def test_bounded_lines_limit_excludes_the_newline_and_keeps_a_last_line() -> None:
    last = msg(3).rstrip(b"\n")
    got, refused, _ = await _collect(msg(1) + b"x" * 100 + b"\n" + last, len(msg(1)) - 1)
    assert got == [msg(1).decode(), last.decode()] and [r[:2] for r in refused] == [
        (None, INVALID_REQUEST)
    ]


async def test_lines_that_are_not_json_rpc_are_answered_not_dropped() -> None:
    nested = (
        b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"a":'
        + b"[" * 5000
        + b"]" * 5000
        + b"}}"
    )
    data = b"not json\n" + b"\n" + nested + b"\n" + b'{"jsonrpc":"2.0","id":"x"}\n' + msg(4)
    got, refused, _ = await _collect(data, 1 << 20)
    assert got == [msg(4).decode()]  # the blank line is skipped silently
    assert [(rid, code) for rid, code, _ in refused] == [
        (None, PARSE_ERROR),
        (9, PARSE_ERROR),  # past the parser's depth limit, still answered for its id
        ("x", INVALID_REQUEST),
    ]
    assert refused[0][2].startswith("not JSON:") and "recursion" in refused[1][2]


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":42,"method":"x"', 42),
        (b'{"jsonrpc": "2.0", "id" : "req-9", "method"', "req-9"),
        (b'{"id":-3,', -3),
        (b'{"method":"x","params":{"q":"aaaa', None),
    ],
)
def test_request_id_from_a_message_prefix(prefix: bytes, expected: Any) -> None:
    assert request_id(prefix) == expected


def _hop(src: list[str], rel: str, dst: list[str], forward: bool = True) -> dict[str, Any]:
    triples = [
        {"head": s if forward else d, "relation": rel, "tail": d if forward else s}
        for s in src
        for d in dst
    ]
    return {"src": src, "relation": rel, "dst": dst, "forward": forward, "triples": triples}


def test_path_text_shows_direction_and_folds_large_sets() -> None:
    hops = [
        _hop(["Once Were Warriors"], "directed_by", ["Lee Tamahori"]),
        _hop(["Lee Tamahori"], "directed_by", [f"F{i}" for i in range(7)], forward=False),
    ]
    assert path_text(hops) == (
        "Once Were Warriors -directed_by-> Lee Tamahori <-directed_by- "
        "{F0, F1, F2, F3, F4, ... (7 in all)}"
    )
    # a result's bounded hop: the first members and the full count
    cut = {**hops[1], "dst": ["F0", "F1"], "dst_total": 31204, "triples_total": 31204}
    assert path_text([cut]).endswith("{F0, F1, ... (31,204 in all)}")
    assert path_out({"hops": [cut]}).hops[0].dst_total == 31204
    named = path_text(hops[:1], {"Once Were Warriors": "OWW (1994)"})
    assert named == "OWW (1994) -directed_by-> Lee Tamahori"


def test_ask_output_caps_paths_and_triples_and_labels_llm_free() -> None:
    many = _hop(["A"], "r", [f"B{i}" for i in range(30)])
    result = {
        "question": "q",
        "mode": "llm-free",
        "answers": [],
        "candidates": [{"id": f"B{i}", "name": f"B{i}"} for i in range(30)],
        "paths": [{"hops": [many]} for _ in range(9)],
        "topic_entities": [
            {"id": "A", "name": "A", "keyword": "a", "score": 0.9, "method": "fuzzy"}
        ],
        "unverified_triples": [["A", "r", "Z"]],
    }
    out = ask_output(result, "rid", max_paths=2)
    assert out.llm_free and out.label and "LLM-free" in out.label
    assert len(out.paths) == 2 and out.paths_total == 9 and len(out.candidates) == 20
    assert len(out.paths[0].hops[0].triples) == 20 and out.paths[0].hops[0].triples_total == 30
    assert out.unverified_triples[0].tail == "Z" and out.topic_entities[0].mention == "a"
    pog = ask_output({**result, "mode": "pog"}, "rid", max_paths=1)
    assert not pog.llm_free and pog.label is None


def test_solve_output_reads_both_result_shapes() -> None:
    raw = {
        "route": "z3",
        "status": "ok",
        "verdict": "sat",
        "solver": "z3",
        "results": [{"solver": "z3", "status": "ok", "program": "(check-sat)"}],
        "model": {"x": "3"},
        "proof": None,
    }
    out = solve_output(raw)
    assert (out.route, out.verdict, out.program, out.model) == (
        "z3",
        "sat",
        "(check-sat)",
        {"x": "3"},
    )
    assert [a.stage for a in out.attempts] == ["program"]
    lkg = {
        "question": "Is it?",
        "status": "solved",
        "verdict": "A",
        "answer": "True",
        "route": {"route": "prover9", "source": "structural"},
        "program": "p",
        "solver": {"proof": "1 [] a.", "model": None},
        "attempts": [{"stage": "codegen", "route": "prover9", "status": "ok", "program": "p"}],
    }
    out = solve_output(lkg)
    assert (out.route, out.proof, out.attempts[0].stage) == ("prover9", "1 [] a.", "codegen")
    json.dumps(out.model_dump(mode="json"))


def test_claim_stdio_keeps_stray_output_off_the_protocol_stream() -> None:
    """Python prints and C-level writes to fd 1 while claimed go to stderr; only what the
    protocol writes reaches stdout; the child's stdin is /dev/null meanwhile."""
    code = (
        "import os, sys\n"
        "from kgreason.server.mcp_stdio import claim_stdio\n"
        "with claim_stdio() as (wire_in, wire_out):\n"
        "    print('stray print')\n"
        "    os.write(1, b'stray fd write\\n')\n"
        "    assert sys.stdin.read() == ''\n"
        "    wire_out.write(wire_in.readline()); wire_out.flush()\n"
        "print('after')\n"
    )
    src = Path(__file__).resolve().parents[2] / "src"
    r = subprocess.run(
        [sys.executable, "-c", code],
        input=b'{"jsonrpc":"2.0"}\n',
        capture_output=True,
        env={"PYTHONPATH": str(src)},
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == b'{"jsonrpc":"2.0"}\nafter\n'  # restored after the block
    assert b"stray print" in r.stderr and b"stray fd write" in r.stderr


def test_the_mcp_layer_uses_the_public_api_and_the_service_only() -> None:
    from tests.server.test_layering import PKG, imports

    files = sorted((PKG / "server").glob("mcp*.py"))
    assert [f.name for f in files] == ["mcp.py", "mcp_models.py", "mcp_stdio.py"]
    for f in files:
        ours = {m for m in imports(f) if m == "kgreason" or m.startswith("kgreason.")}
        allowed = {"kgreason", "kgreason.tracing"}
        assert all(m in allowed or m.startswith("kgreason.server.") for m in ours), (f, ours)
