"""`kgreason report` on a small CWQ run directory written by hand: accuracy by gold SPARQL
length (PoG Figs 5-6), the relation-overlap distribution (Fig. 7) and the error taxonomy
(B.3), every figure checked against the rows below."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.eval.breakdown import by_relation_overlap, by_sparql_length, overlap_bin

PATH = [[["m.a", "r.one", "m.b"]]]

# (sparql_length, relation_overlap, strict_hit1, lenient_hit, answers, error_kind)
ROWS = [
    (2, 1.0, True, True, ["B"], None),
    (2, 0.3, False, True, ["C"], None),  # lenient only
    (3, 0.5, True, True, ["B"], None),
    (3, 1.0, True, True, ["B"], None),
    (3, None, False, False, [], "llm-unreadable-reply"),
    (4, 0.0, False, False, ["Unknown"], None),
    (9, 0.0, True, True, ["B"], None),  # length 9 falls in "8+"
    (None, None, False, False, ["Z"], None),  # gold query unreadable: not in the breakdown
]


def _rows() -> list[dict]:
    out = []
    for i, (length, overlap, hit, lenient, answers, kind) in enumerate(ROWS):
        out.append({
            "index": i, "id": f"q{i}", "dataset": "cwq", "question": f"q{i}?", "gold": ["B"],
            "hops": None, "qtype": "composition", "method": "tog", "answers": answers,
            "answer_ids": [None] * len(answers), "answer_kind": "answer",
            "output_text": " ".join(answers), "phase": "paths", "error_kind": kind,
            "error": None, "paths": PATH if overlap is not None else [],
            "names": {"m.a": "A", "m.b": "B"}, "topics": ["m.a"], "extra": {}, "usage": {},
            "llm_calls": 3, "prompt_tokens": 30, "completion_tokens": 3,
            "strict_hit1": hit, "any_hit": hit, "lenient_hit": lenient,
            "sparql_length": length, "gold_relations": ["r.one"], "relation_overlap": overlap,
        })  # fmt: skip
    return out


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    d = tmp_path / "cwq-tog"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"dataset": "cwq", "method": "tog"}))
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    (d / "timings.jsonl").write_text(
        "".join(json.dumps({"id": f"q{i}", "index": i, "wall_s": 0.1}) + "\n" for i in range(8))
    )
    return d


def test_length_bins_by_hand():
    assert by_sparql_length(_rows()) == {
        "2": {"n": 2, "accuracy": 50.0, "lenient": 100.0},
        "3": {"n": 3, "accuracy": 66.67, "lenient": 66.67},
        "4": {"n": 1, "accuracy": 0.0, "lenient": 0.0},
        "8+": {"n": 1, "accuracy": 100.0, "lenient": 100.0},
    }


def test_overlap_bins_by_hand():
    # correct rows with a ratio: 1.0, 0.5, 1.0, 0.0 -> shares 50 / 25 / 25
    assert by_relation_overlap(_rows()) == {
        "0": {"n": 2, "accuracy": 50.0, "share_of_correct": 25.0},
        "(25,50]": {"n": 2, "accuracy": 50.0, "share_of_correct": 25.0},
        "100": {"n": 2, "accuracy": 100.0, "share_of_correct": 50.0},
    }
    assert [overlap_bin(x) for x in (0, 0.01, 0.25, 0.26, 0.75, 0.99, 1)] == [
        "0", "(0,25]", "(0,25]", "(25,50]", "(50,75]", "(75,100)", "100",
    ]  # fmt: skip


def test_report_shows_the_cwq_breakdowns_and_taxonomy(run_dir: Path):
    res = CliRunner().invoke(app, ["report", str(run_dir)])
    assert res.exit_code == 0, res.output
    md = (run_dir / "report.md").read_text()
    assert "## cwq-tog: accuracy by gold SPARQL length (cwq, PoG Figs 5-6)" in md
    assert "| 3 | 3 | 66.67 | 66.67 |" in md and "| 8+ | 1 | 100.0 | 100.0 |" in md
    assert "| 100 | 2 | 100.0 | 50.0 |" in md
    assert "| format error | llm-unreadable-reply | 1 |" in md
    assert "| refuse error | refused | 1 |" in md
    assert "| answer generation error | gold on paths | 1 |" in md  # q1: "C", B on its path
    assert "| other hallucination error | no path | 1 |" in md  # q7: "Z", no path
    page = (run_dir / "report.html").read_text()
    assert "Accuracy by gold SPARQL length (cwq)" in page and "Error taxonomy" in page


def test_runs_without_gold_queries_show_no_breakdown(run_dir: Path):
    rows = [{k: v for k, v in r.items() if k not in ("sparql_length", "relation_overlap")}
            for r in _rows()]  # fmt: skip
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = CliRunner().invoke(app, ["report", str(run_dir)])
    assert res.exit_code == 0, res.output
    md = (run_dir / "report.md").read_text()
    assert "gold SPARQL length" not in md and "error taxonomy" in md


def test_two_runs_side_by_side(run_dir: Path, tmp_path: Path):
    other = tmp_path / "cwq-pog"
    other.mkdir()
    for name in ("config.json", "timings.jsonl"):
        (other / name).write_text((run_dir / name).read_text())
    rows = _rows()
    for r in rows:  # this run gets every length-2 and length-4 question right
        if r["sparql_length"] in (2, 4):
            r["strict_hit1"] = True
    rows = [r for r in rows if r["sparql_length"] != 9]  # and has no 8+ question
    (other / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "both"
    res = CliRunner().invoke(app, ["report", str(run_dir), str(other), "--out", str(out)])
    assert res.exit_code == 0, res.output
    md = (out / "report.md").read_text()
    assert "| length | cwq-tog | cwq-pog |" in md
    assert "| 2 | 50.0 (n=2) | 100.0 (n=2) |" in md
    assert "| 8+ | 100.0 (n=1) | – |" in md
    assert "runs side by side" in (out / "report.html").read_text()
