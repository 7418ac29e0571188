"""`kgreason ask` end to end over HTTP with structured outputs: against a server that
advertises vLLM every PoG request carries its stage's schema; against one that refuses
`response_format` the run falls back to plain prompting once and answers the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.llm.schema import load_stage_schema
from tests.pog.scripted_pog import stage_of
from tests.pog.test_cli_ask import GERMANY, QUESTION, _server, env, script, store  # noqa: F401

pytestmark = pytest.mark.integration
runner = CliRunner()


def _schema_of(stage: str) -> dict:
    return load_stage_schema("kgreason.pog", stage).schema


def test_ask_sends_each_stage_schema_to_a_vllm_server(store: Path, env, monkeypatch) -> None:  # noqa: F811
    srv = _server(monkeypatch, script())
    srv.gets = {"/v1/models": (200, {}, {"data": [{"id": "m", "owned_by": "vllm"}]})}
    try:
        r = runner.invoke(app, ["ask", QUESTION, "--kg", str(store)])
    finally:
        srv.close()
    assert r.exit_code == 0, r.stderr
    assert f"Answer: Germany ({GERMANY})" in r.stdout
    stages = [stage_of(req["messages"]) for req in srv.requests]
    assert len(stages) >= 3
    for stage, req in zip(stages, srv.requests, strict=True):
        assert req["structured_outputs"] == {"json": _schema_of(stage)}, stage
    assert srv.get_paths.count("/v1/models") == 1  # detected once per run


def test_ask_falls_back_to_plain_prompting(store: Path, env, monkeypatch) -> None:  # noqa: F811
    srv = _server(monkeypatch, script())
    srv.reject_fields = {"response_format": "response_format is not supported"}
    try:
        r = runner.invoke(app, ["ask", QUESTION, "--kg", str(store)])
    finally:
        srv.close()
    assert r.exit_code == 0, r.stderr
    assert f"Answer: Germany ({GERMANY})" in r.stdout
    carried = ["response_format" in req for req in srv.requests]
    assert carried[0] and not any(carried[1:])  # refused once, then plain prompting
