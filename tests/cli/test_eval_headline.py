"""`kgreason eval` ends with its headline table (and `--json` carries the same figures):
the scores are those of the run directory's rows, the counts those of this command."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app

runner = CliRunner()
ARGS = ["eval", "metaqa", "--hops", "1", "--method", "llm-free", "--limit", "4"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")  # the bundled KG is built once for the module


@pytest.fixture(autouse=True)
def env(monkeypatch, tmp_path, cache) -> None:
    for k in list(os.environ):
        if k.startswith(("OPENAI_", "KGREASON_")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    monkeypatch.setenv("KGREASON_CACHE_DIR", str(cache))
    monkeypatch.chdir(tmp_path)


def rate(rows: list[dict], key: str) -> float:
    return round(100 * sum(bool(r[key]) for r in rows) / len(rows), 2)


def test_headline_matches_the_rows_and_resume_counts(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = runner.invoke(app, [*ARGS, "--out", str(out), "--json"])
    assert r.exit_code == 0, r.stderr
    h = json.loads(r.stdout)["headline"]
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text("utf-8").splitlines()]
    assert h["questions"] == len(rows) == 4
    assert h["computed"] == 4 and h["already_done"] == 0 and h["skipped"] == 0
    assert h["failed"] == sum(1 for x in rows if x["error_kind"])
    assert set(h["scores"]) == {"strict_hit1", "lenient_hit", "any_hit"}  # no EM/F1 here
    for key in h["scores"]:
        assert h["scores"][key] == rate(rows, key)
    assert h["wall_s"] > 0

    r = runner.invoke(app, [*ARGS, "--out", str(out), "--resume"])
    assert r.exit_code == 0, r.stderr
    text = r.stdout
    assert "candidate Hits@1 (%)" in text and "gold among candidates (%)" in text
    assert f"{h['scores']['strict_hit1']:.2f}" in text
    assert "already done (resumed)" in text and "wall time (s)" in text
    computed = next(line for line in text.splitlines() if "│ computed" in line)
    assert computed.split("│")[2].strip() == "0"
