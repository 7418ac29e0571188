"""`-v`/`-vv` through the real CLI: each stage with its timing (INFO), and at -vv each LLM,
SPARQL and solver call (DEBUG) on the named loggers."""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.lkg.test_pipeline_fixtures import HORN_CONTEXT, HORN_PROGRAM, HORN_QUESTION
from tests.pog.test_cli_ask import _server, env, store  # noqa: F401
from tests.pog.test_e2e_nijmegen import QUESTION, script
from tests.servers import stub_endpoint
from tests.tracing.scripts import horn_llm
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.cli.common import hoist_verbose
from kgreason.kg.sparql import RetryPolicy, SparqlClient

runner = CliRunner()
POG_STAGES = ["topic_entity", "graph", "question_analysis", "exploration", "faithfulness"]
LKG_STAGES = ["construct", "retrieve", "route", "codegen"]


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """The CLI sets the kgreason logger's level and a root handler: undo both."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    logging.getLogger("kgreason").setLevel(logging.NOTSET)
    for h in root.handlers[:]:
        if h not in handlers:
            root.removeHandler(h)
    root.setLevel(level)


def _stage_lines(stderr: str, pipeline: str) -> list[str]:
    return re.findall(rf"^INFO kgreason\.{pipeline}\.(\w+): done in [\d.]+ ms", stderr, re.M)


def test_hoist_verbose_moves_only_verbosity_flags() -> None:
    assert hoist_verbose(["ask", "-vv", "q", "--json"]) == ["-vv", "ask", "q", "--json"]
    assert hoist_verbose(["-v", "ask", "q"]) == ["-v", "ask", "q"]
    assert hoist_verbose(["ask", "--", "-v"]) == ["ask", "--", "-v"]
    assert hoist_verbose(["ask", "-x"]) == ["ask", "-x"]


def test_ask_vv_logs_each_stage_and_llm_call(store, env, monkeypatch) -> None:  # noqa: F811
    srv = _server(monkeypatch, script())
    try:
        r = runner.invoke(app, ["ask", "-vv", QUESTION, "--kg", str(store)])
    finally:
        srv.close()
    assert r.exit_code == 0, r.stderr
    assert _stage_lines(r.stderr, "pog") == POG_STAGES
    calls = re.findall(r"^DEBUG kgreason\.llm: (\w+): \d+\+\d+ tokens in [\d.]+ s", r.stderr, re.M)
    assert len(calls) == len(srv.requests) > 0
    assert "question_analysis" in calls
    assert "DEBUG kgreason.pog.graph: start topics=2" in r.stderr


def test_ask_v_logs_stages_but_not_calls(store, env, monkeypatch) -> None:  # noqa: F811
    srv = _server(monkeypatch, script())
    try:
        r = runner.invoke(app, ["-v", "ask", QUESTION, "--kg", str(store)])
    finally:
        srv.close()
    assert r.exit_code == 0, r.stderr
    assert _stage_lines(r.stderr, "pog") == POG_STAGES
    assert "kgreason.llm" not in r.stderr and "DEBUG" not in r.stderr


def test_ask_without_v_logs_nothing(store, env, monkeypatch) -> None:  # noqa: F811
    srv = _server(monkeypatch, script())
    try:
        r = runner.invoke(app, ["ask", QUESTION, "--kg", str(store)])
    finally:
        srv.close()
    assert r.exit_code == 0 and r.stderr == ""


@pytest.mark.usefixtures("env")
def test_solve_vv_logs_stages_llm_and_solver_calls(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("kgreason.cli.solve.make_llm", lambda *a, **k: horn_llm())
    ctx = tmp_path / "c.txt"
    ctx.write_text(HORN_CONTEXT, encoding="utf-8")
    args = ["solve", "-vv", "--context", str(ctx), "--question", HORN_QUESTION, "--no-embed"]
    r = runner.invoke(app, [*args, "--options", "A) True", "--options", "B) False"])
    assert r.exit_code == 0, r.stderr
    assert _stage_lines(r.stderr, "lkg") == LKG_STAGES
    assert re.search(r"^DEBUG kgreason\.llm: lkg_construct: \d+\+\d+ tokens", r.stderr, re.M)
    assert re.search(r"^DEBUG kgreason\.llm: codegen: ", r.stderr, re.M)
    assert re.search(
        r"^DEBUG kgreason\.lkg\.solvers: \S+: exit 0 in [\d.]+ s \(cpu", r.stderr, re.M
    )


@pytest.mark.usefixtures("env")
def test_solve_program_vv_logs_the_solver_call(tmp_path: Path) -> None:
    prog = tmp_path / "p.rules"
    prog.write_text(HORN_PROGRAM, encoding="utf-8")
    args = ["solve", "--program", str(prog), "--question", HORN_QUESTION, "-vv"]
    r = runner.invoke(app, [*args, "--options", "A) True", "--options", "B) False"])
    assert r.exit_code == 0, r.stderr
    assert re.search(r"^DEBUG kgreason\.lkg\.solvers: \S+: exit 0 in", r.stderr, re.M)


async def test_sparql_calls_and_retries_are_logged(caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="kgreason.kg.sparql")

    async def no_sleep(_s: float) -> None:
        return None

    with stub_endpoint() as (base, hits):
        policy = RetryPolicy(max_retries=3, base_s=0.5, max_s=3.0, rng=random.Random(7))
        client = SparqlClient(base + "/flaky", timeout_s=5.0, retry=policy, sleep=no_sleep)
        try:
            await client.ask("ASK {}")
        finally:
            await client.aclose()
    msgs = [r.getMessage() for r in caplog.records if r.name == "kgreason.kg.sparql"]
    retries = [m for m in msgs if ": retry " in m]
    assert len(retries) == hits["/flaky"] - 1 == 2
    assert "retry 1/3" in retries[0] and "HTTP 503" in retries[0]
    assert re.search(r": HTTP 200, \d+ bytes in [\d.]+ s$", msgs[-1])
