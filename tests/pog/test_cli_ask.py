"""`kgreason ask` through the real CLI: a store built from the Nijmegen fixture, a real
OpenAI-protocol server on loopback answering from the prompts, and LLM-free mode."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.llm.fake_server import FakeOpenAIServer
from tests.pog.scripted_pog import stage_of
from tests.pog.test_e2e_nijmegen import FIXTURE, FRANCE, GERMANY, NIJMEGEN, QUESTION, script
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.pog.labels import SIMILARITY_LABEL as LLM_FREE_LABEL
from kgreason.pog.labels import ZERO_SHOT_LABEL

runner = CliRunner()


class PromptServer(FakeOpenAIServer):
    """Replies computed from each request's prompt by the e2e test's scripted stages."""

    def __init__(self, stages: dict[str, Any]):
        super().__init__()
        self.stages = stages

    def respond(self, h, kind, arg):
        if kind != "fn":
            return super().respond(h, kind, arg)
        messages = self.requests[-1]["messages"]
        entry = self.stages[stage_of(messages)]
        text = entry(messages) if callable(entry) else entry[0]
        return super().respond(h, "ok", text)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kg") / "nijmegen"
    r = runner.invoke(app, ["kg", "build", str(FIXTURE), "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    return out


@pytest.fixture
def env(monkeypatch, tmp_path) -> Iterator[None]:
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "KGREASON_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    monkeypatch.setenv("KGREASON_LLM__CACHE", "false")
    monkeypatch.chdir(tmp_path)
    yield


def _server(monkeypatch, stages: dict[str, Any], n: int = 60) -> FakeOpenAIServer:
    srv = PromptServer(stages).start()
    srv.plan = [("fn", None)] * n
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("KGREASON_LLM__MAX_RETRIES", "0")
    return srv


def test_ask_answers_with_paths(store, env, monkeypatch) -> None:
    srv = _server(monkeypatch, script())
    try:
        r = runner.invoke(app, ["ask", QUESTION, "--kg", str(store)])
        assert r.exit_code == 0, r.stderr
        assert f"Answer: Germany ({GERMANY})" in r.stdout
        assert "Phase: topic-entity-path" in r.stdout
        assert "{m.03vp2t: Weeze Airport}" in r.stdout and "adjoin_s" in r.stdout
        assert LLM_FREE_LABEL not in r.stdout

        r = runner.invoke(app, ["ask", QUESTION, "--kg", str(store), "--json"])
        assert r.exit_code == 0, r.stderr
        data = json.loads(r.stdout)
        assert [a["id"] for a in data["answers"]] == [GERMANY]
        assert data["mode"] == "pog" and data["ok"] and data["unverified_triples"] == []
        assert data["usage"]["question_analysis"]["calls"] == 1
    finally:
        srv.close()


def test_ask_unreadable_replies_exit_with_one_line(store, env, monkeypatch) -> None:
    srv = _server(monkeypatch, {s: ["I am not sure."] for s in script()})
    try:
        r = runner.invoke(
            app, ["ask", QUESTION, "--kg", str(store), "--topic", NIJMEGEN, "--topic", "France"]
        )
    finally:
        srv.close()
    assert r.exit_code != 0
    assert len(r.stderr.strip().splitlines()) == 1
    assert "llm-unreadable-reply" in r.stderr and "question_analysis" in r.stderr
    # only the analysis call and its one re-ask reached the server (topics were given)
    assert len(srv.requests) == 2


def test_ask_without_llm_is_labelled_llm_free(store, env) -> None:
    args = ["ask", QUESTION, "--kg", str(store), "--topic", NIJMEGEN, "--topic", FRANCE]
    similarity = [*args, "--ranker", "none"]
    r = runner.invoke(app, similarity)
    assert r.exit_code == 0, r.stderr
    assert LLM_FREE_LABEL in r.stdout and "Answer:" not in r.stdout
    data = json.loads(runner.invoke(app, [*similarity, "--json"]).stdout)
    assert data["mode"] == "llm-free" and data["label"] == LLM_FREE_LABEL
    assert data["answers"] == [] and data["candidates"] and data["paths"]
    # the default on a KG no ranker was trained on: a zero-shot ranking answers, and says so
    data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert data["mode"] == "llm-free" and data["label"] == ZERO_SHOT_LABEL
    assert data["answers"] or data["abstained"]


def test_ask_errors_are_one_line(store, env) -> None:
    r = runner.invoke(app, ["ask", QUESTION, "--kg", str(store), "--topic", "m.nope"])
    assert r.exit_code != 0 and len(r.stderr.strip().splitlines()) == 1
    assert 'unknown entity "m.nope"' in r.stderr and r.stdout == ""
    r = runner.invoke(app, ["ask", "  ", "--kg", str(store)])
    assert r.exit_code != 0 and "empty" in r.stderr
    r = runner.invoke(app, ["ask", QUESTION, "--kg", str(store), "--strategy", "greedy"])
    assert r.exit_code != 0 and "pog.strategy" in r.stderr
