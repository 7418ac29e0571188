"""`kgreason report` on a recorded run: PoG's Table 2 (single- vs multi-entity questions) and
Figure 8 (which phase, and so which evidence, produced the answers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.eval import breakdown

#: (topics, phase, correct): 4 single-entity, 3 multi-entity, 1 with no topic entity
ROWS = [
    (["m.a"], "topic-entity-path", True),
    (["m.a"], "topic-entity-path", True),
    (["m.b"], "final-llm-knowledge", False),
    (["m.c", "m.c"], "llm-supplement", True),  # one entity named twice is single-entity
    (["m.a", "m.b"], "node-expand", True),
    (["m.a", "m.b"], "final-llm-knowledge", True),
    (["m.a", "m.b", "m.c"], "topic-entity-path", False),
    ([], None, False),  # topic linking failed: no phase
]


def _row(i: int, topics: list[str], phase: str | None, ok: bool) -> dict:
    usage = {"llm_calls": 3, "prompt_tokens": 10, "completion_tokens": 2}
    return {"index": i, "id": f"q{i}", **usage, "strict_hit1": ok, "lenient_hit": ok,
            "topics": topics, "phase": phase, "extra": {"bounds_hit": []}}  # fmt: skip


def _rows() -> list[dict]:
    return [_row(i, *r) for i, r in enumerate(ROWS)]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    out = tmp_path / "cwq-pog"
    out.mkdir()
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    (out / "config.json").write_text(json.dumps({"dataset": "cwq", "method": "pog"}))
    return out


def test_by_topic_count():
    got = breakdown.by_topic_count(_rows())
    assert got == {
        "single-entity": {"n": 4, "accuracy": 75.0, "lenient": 75.0},
        "multi-entity": {"n": 3, "accuracy": 66.67, "lenient": 66.67},
        "no topic entity": {"n": 1, "accuracy": 0.0, "lenient": 0.0},
    }
    assert breakdown.by_topic_count([{"id": "x", "strict_hit1": True}]) == {}


def test_by_phase_in_algorithm_order_with_figure_8_categories():
    got = breakdown.by_phase(_rows())
    assert list(got) == [
        "topic-entity-path", "llm-supplement", "node-expand", "final-llm-knowledge", "none"
    ]  # fmt: skip
    assert got["topic-entity-path"] == {
        "evidence": "KG only", "n": 3, "correct": 2, "accuracy": 66.67, "share_of_correct": 40.0
    }  # fmt: skip
    assert got["final-llm-knowledge"]["evidence"] == "KG-inspired LLM"
    assert got["llm-supplement"]["evidence"] == "LLM-inspired KG"
    assert got["none"]["evidence"] == "–" and got["none"]["correct"] == 0
    # Figure 8: 5 correct answers, 3 from KG paths, 1 verified by the KG, 1 completed by the LLM
    assert breakdown.evidence_shares(got) == {
        "KG only": 60.0, "LLM-inspired KG": 20.0, "KG-inspired LLM": 20.0
    }  # fmt: skip
    assert breakdown.by_phase([{"id": "x", "phase": None}]) == {}


def test_report_shows_both_tables(run_dir: Path, tmp_path: Path):
    res = CliRunner().invoke(
        app, ["report", str(run_dir), "--out", str(tmp_path / "rep"), "--json"]
    )
    assert res.exit_code == 0, res.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## cwq-pog: single- vs multi-entity questions (PoG Table 2)" in md
    assert "| single-entity | 4 | 75.0 | 75.0 |" in md
    assert "| multi-entity | 3 | 66.67 | 66.67 |" in md
    assert "## cwq-pog: where the answers came from (PoG Fig. 8)" in md
    assert "| llm-supplement | LLM-inspired KG | 1 | 1 | 100.0 | 20.0 |" in md
    assert (
        "Of the correct answers: KG only 60.0%, LLM-inspired KG 20.0%, KG-inspired LLM 20.0%." in md
    )
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "PoG Table 2" in page and "PoG Fig. 8" in page and "KG-inspired LLM" in page
    (run,) = json.loads(res.stdout)["runs"]
    assert run["by_topic_count"]["multi-entity"]["n"] == 3
    assert run["by_phase"]["node-expand"]["correct"] == 1
    assert run["evidence_of_correct"]["KG only"] == 60.0
    assert run["bounds"]["hit"] == 0
