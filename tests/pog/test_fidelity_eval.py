"""`kgreason eval` with PoG's paper settings against a real OpenAI-protocol server on
loopback: `--strategy fuzzy-precise` (the default) and `three-step`, `--sample 1000 --seed 0`
(on a 3-question dataset: the sample is min(N, len)), and the `--no-summary` ablation. The
server answers every stage from the prompt it receives, like a model that reads the paths."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.eval.test_sample import _metaqa_dir
from tests.pog.scripted_pog import (
    answer_from,
    node_sets,
    question_block,
    requested_width,
    shown_paths,
)
from tests.pog.test_cli_ask import PromptServer
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.llm.base import Message

runner = CliRunner()
SUMMARY_MARK = "(summarised)"


def _analysis(messages: list[Message]) -> str:
    topics = json.loads(re.search(r"Topic Entity: (\[.*\])", question_block(messages))[1])
    q = re.search(r"\nQ: (.*)", question_block(messages))[1]
    return json.dumps(
        {
            "split_questions": [q],
            "indicator": f'"{topics[0]}" - related to - answer(the answer)',
            "topic_order": topics,
        }
    )


def _select(messages: list[Message]) -> str:
    n = min(requested_width(messages), len(shown_paths(messages)))
    return "top_list: {" + ", ".join(f"Path {i + 1}" for i in range(n)) + "}"


def _summary(messages: list[Message]) -> str:
    return f"summary: {SUMMARY_MARK} " + shown_paths(messages)[0]


STAGES = {
    "question_analysis": _analysis,
    "precise_select": _select,
    "summarise": _summary,
    "evaluate": lambda m: "{Yes}. The paths answer the question.",
    "answer": answer_from(lambda p: node_sets(p)[-1][:1]),
    "supplement": lambda m: "[]",
    "final_answer": answer_from(lambda p: node_sets(p)[-1][:1]),
}


@pytest.fixture
def server(monkeypatch, tmp_path):
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "KGREASON_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    monkeypatch.setenv("KGREASON_LLM__CACHE", "false")
    monkeypatch.setenv("KGREASON_LLM__MAX_RETRIES", "0")
    monkeypatch.chdir(tmp_path)
    srv = PromptServer(STAGES).start()
    srv.plan = [("fn", None)] * 500
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    yield srv
    srv.close()


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text("utf-8").splitlines()]


@pytest.mark.parametrize(
    ("flags", "strategy", "summary"),
    [
        ([], "fuzzy-precise", True),
        (["--strategy", "three-step"], "three-step", True),
        (["--strategy", "precise", "--no-summary"], "fuzzy-precise", False),
    ],
)
def test_eval_pog_paper_settings(server, tmp_path, flags, strategy, summary) -> None:
    data = _metaqa_dir(tmp_path, 3)
    args = ["eval", "metaqa", "--method", "pog", "--data-dir", str(data), "--out", "run"]
    r = runner.invoke(app, [*args, "--sample", "1000", "--seed", "0", *flags, "--json"])
    assert r.exit_code == 0, r.stderr + r.stdout
    cfg = json.loads((tmp_path / "run" / "config.json").read_text())
    assert (cfg["sample"], cfg["seed"]) == (1000, 0)
    assert cfg["settings"]["pog.strategy"] == strategy
    assert cfg["settings"]["pog.summary"] is summary
    rows = _rows(tmp_path / "run")
    assert len(rows) == 3  # min(1000, 3)
    assert all(row["error_kind"] is None for row in rows), rows
    assert all(row["answers"] and row["phase"] == "topic-entity-path" for row in rows)
    for row in rows:
        assert 1 <= row["paper_calls"] <= row["llm_calls"] == row["usage"]["total"]["calls"]
        assert ("summarise" in row["usage"]) is summary
    headline = json.loads(r.stdout)["headline"]
    assert headline["mean_paper_calls"] <= headline["mean_llm_calls"]
    # what the server was asked: the summary, never the raw paths, in evaluate and answer
    prompts = [req["messages"][0]["content"] for req in server.requests]
    answering = [p for p in prompts if "determine whether these paths are sufficient" in p]
    assert len(answering) == 3
    for p in answering:
        assert (SUMMARY_MARK in question_block([{"role": "user", "content": p}])) is summary
    # a replay re-runs the recorded strategy, summary mode and sample from the transcript
    n_requests = len(server.requests)
    replay = runner.invoke(app, ["eval", "--replay", "run", "--data-dir", str(data), "--json"])
    assert replay.exit_code == 0, replay.stderr + replay.stdout
    assert json.loads(replay.stdout)["identical_to_original"] is True
    assert len(server.requests) == n_requests
    report = runner.invoke(app, ["report", "run", "--out", "rep"])
    assert report.exit_code == 0, report.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "as the PoG paper counts" in md and "HTTP requests" in md
