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


def line_no(row_id: str) -> int:
    return int(row_id.rsplit("-", 1)[1])  # metaqa-1hop-N: N is the line in the dataset file


def test_llm_free_leaves_out_the_bundled_ranker_training_questions(tmp_path: Path) -> None:
    """The bundled ranker was trained on the first 4,000 MetaQA dev questions per hop: by
    default they are left out, the limit counts the rest, and the table and config say so."""
    out = tmp_path / "held-out"
    r = runner.invoke(app, [*ARGS, "--split", "dev", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.stderr
    h = json.loads(r.stdout)["headline"]
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text("utf-8").splitlines()]
    assert len(rows) == 4 and all(line_no(x["id"]) > 4000 for x in rows)
    assert h["run"] == {
        "dataset": "metaqa", "split": "dev", "hops": "1", "method": "llm-free",
        "LLM": "no LLM (LLM-free mode)",
        "ranker": "bundled MetaQA path ranker (mlp), trained on metaqa, dev, 1/2/3-hop, "
                  "first 4000 per hop",
        "sample": "first 4",
    }  # fmt: skip
    assert h["trained_note"].startswith("excluded 4,000 questions: 3,985 the ranker was trained")
    assert not h["trained_warning"]
    cfg = json.loads((out / "config.json").read_text("utf-8"))
    assert (cfg["split"], cfg["hops"], cfg["defaulted"]) == ("dev", 1, [])
    t = cfg["trained_questions"]
    assert (t["policy"], t["excluded"], t["excluded_trained"], t["evaluated"]) == (
        "exclude", 4000, 3985, 4
    )  # fmt: skip
    assert cfg["ranker"]["training_questions_recorded"] is True


def test_include_trained_warns_and_the_default_hop_is_named(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line
    out = tmp_path / "kept"
    args = ["eval", "metaqa", "--method", "llm-free", "--limit", "3", "--include-trained"]
    r = runner.invoke(app, [*args, "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "hops │ 1 (default; pass --hops 1,2,3 for all)" in text
    assert "split │ dev (default)" in text and "sample │ first 3" in text
    assert "WARNING: 3 of 3 questions are ones the ranker was trained on" in text
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text("utf-8").splitlines()]
    assert [line_no(x["id"]) for x in rows] == [1, 2, 3]
    cfg = json.loads((out / "config.json").read_text("utf-8"))
    assert (cfg["hops"], cfg["split"], cfg["defaulted"]) == (1, "dev", ["split", "hops"])
    assert cfg["trained_questions"]["policy"] == "include"
    assert cfg["trained_questions"]["in_run"] == 3

    # `report`: every field named, none blank, the warning in bold above the tables
    held = tmp_path / "held"
    assert runner.invoke(app, [*ARGS, "--out", str(held)]).exit_code == 0
    r = runner.invoke(app, ["report", str(out), str(held), "--out", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.stderr
    md = (tmp_path / "rep" / "report.md").read_text("utf-8")
    assert "model none" not in md and "  ," not in md
    assert md.count("**kept: WARNING: 3 of 3 questions are ones the ranker") == 1
    names = ("dataset", "split", "hops", "method", "LLM", "ranker", "sample",
             "ranker's training questions")  # fmt: skip
    fields: dict[str, list[str]] = {}
    for line in md.splitlines():  # the first table; a later "| hops |" heads the by-hop one
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and cells[0] in names and cells[0] not in fields:
            assert all(cells), line
            fields[cells[0]] = cells[1:]
    assert fields["hops"] == ["1 (default; pass --hops 1,2,3 for all)", "1"]
    assert fields["LLM"] == ["no LLM (LLM-free mode)"] * 2
    assert fields["ranker's training questions"][1].startswith("excluded 4,000 questions")
    assert len(fields) == 8
    html = (tmp_path / "rep" / "report.html").read_text("utf-8")
    assert "<td>no LLM (LLM-free mode)</td>" in html and "model none" not in html


def test_several_hops_have_a_per_hop_breakdown(tmp_path: Path) -> None:
    args = ["eval", "metaqa", "--hops", "1,3", "--method", "llm-free", "--limit", "2"]
    r = runner.invoke(app, [*args, "--out", str(tmp_path / "r"), "--json"])
    assert r.exit_code == 0, r.stderr
    h = json.loads(r.stdout)["headline"]
    assert h["questions"] == 4 and h["run"]["hops"] == "1, 3"
    assert h["run"]["sample"] == "first 2 per hop"
    assert {k: v["n"] for k, v in h["by_hops"].items()} == {"1": 2, "3": 2}
    cfg = json.loads((tmp_path / "r" / "config.json").read_text("utf-8"))
    assert cfg["hops"] == [1, 3] and cfg["trained_questions"]["excluded"] == 8000
    bad = runner.invoke(app, ["eval", "metaqa", "--hops", "4", "--method", "llm-free"])
    assert bad.exit_code != 0 and "1, 2, 3-hop" in bad.stderr
