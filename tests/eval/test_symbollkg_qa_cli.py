"""`kgreason eval hotpotqa --method symbollkg` as a user runs it, against a local
OpenAI-protocol server serving the fixture's scripted replies: the headline and the report
show Recall@2, Recall@5, EM and F1 with the values computed by hand in
tests/lkg/test_qa_hotpot.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.lkg.test_qa_hotpot import EXPECTED_MEANS, EXPECTED_ROWS, FIXTURE, responder
from tests.llm.fake_server import FakeOpenAIServer


class FixtureServer(FakeOpenAIServer):
    """Answers every chat request with the fixture's responder (one question at a time)."""

    def respond(self, h: Any, kind: str, arg: Any) -> None:
        if kind == "ok" and arg == "fine":  # the empty plan's default: script it
            arg = responder(self.requests[-1]["messages"])
        return super().respond(h, kind, arg)


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_"))}
    env.update(
        KGREASON_EMBED__BACKEND="static",
        # vector anchors off (tau is a cosine, at most 1, which only a node text equal to the
        # question reaches), so the ranking is the hand-traced one; the embedder still loads
        # and embeds every node
        KGREASON_LKG__TAU="1",
        KGREASON_CACHE_DIR=str(tmp / "cache"),
        KGREASON_LLM__CACHE_PATH=str(tmp / "llm-cache.sqlite"),
        **extra,
    )
    return env


def _kgreason(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kgreason", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_eval_hotpotqa_symbollkg_reports_recall_em_f1(tmp_path: Path):
    server = FixtureServer().start()
    try:
        env = _env(tmp_path, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test")
        args = ["eval", "hotpotqa", "--method", "symbollkg", "--data-dir", str(FIXTURE)]
        r = _kgreason(
            [*args, "--out", str(tmp_path / "run"), "--no-cache", "--json"], env, tmp_path
        )
    finally:
        server.close()
    assert r.returncode == 0, r.stderr
    scores = json.loads(r.stdout)["headline"]["scores"]
    for key, value in EXPECTED_MEANS.items():
        assert abs(scores[key] - value) < 1e-3, (key, scores)
    rows = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    got = {x["id"]: (x["recall@2"], x["recall@5"], x["em"], x["f1"]) for x in rows}
    assert got == EXPECTED_ROWS

    rep = _kgreason(["report", str(tmp_path / "run")], _env(tmp_path), tmp_path)
    assert rep.returncode == 0, rep.stderr
    md = (tmp_path / "run" / "report.md").read_text()
    assert "| Recall@2 (%) | 50 |" in md and "| Recall@5 (%) | 83.3333 |" in md
    assert "| EM (%) | 33.3333 |" in md and "| F1 (%) | 46.6667 |" in md


def test_symbollkg_without_an_llm_says_it_needs_one(tmp_path: Path):
    r = _kgreason(
        ["eval", "hotpotqa", "--method", "symbollkg", "--data-dir", str(FIXTURE),
         "--out", str(tmp_path / "nollm")],
        _env(tmp_path),
        tmp_path,
    )  # fmt: skip
    assert r.returncode == 1
    assert "SymbolLKG needs an LLM" in r.stderr and "no LLM-free SymbolLKG" in r.stderr
    assert not (tmp_path / "nollm" / "results.jsonl").exists()
