"""Eval rows keep the LLM router's own choice beside the final route, and the run figures
give router accuracy against paper Table 5's per-dataset gold solver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.lkg.test_pipeline_fixtures import (
    HORN_CONTEXT,
    HORN_EXTRACTION,
    HORN_OPTIONS,
    HORN_PROGRAM,
    HORN_QUESTION,
    fenced,
    js,
)

from kgreason.eval.adapters import SymbolLKGMethod
from kgreason.eval.lkg_scores import gold_route, lkg_metrics
from kgreason.eval.records import Answer, Record
from kgreason.eval.runner import run
from kgreason.eval.summarize import load_run
from kgreason.lkg.settings import LKGSettings
from kgreason.llm.testing import ScriptedLLM

S = LKGSettings(solver_timeout_s=5, solver_memory_mb=512, max_repairs=1)


def _record(i: int, dataset: str) -> Record:
    return Record(
        id=f"p{i}", dataset=dataset, task="logic", question=HORN_QUESTION,
        context=HORN_CONTEXT, options=HORN_OPTIONS, label="B", answers=[Answer("B")],
    )  # fmt: skip


async def test_rows_keep_the_llm_choice_and_the_report_scores_it(tmp_path: Path):
    # p0 ProntoQA: the LLM says PYKE (horn).              gold horn: LLM ✓ final ✓ structural ✓
    # p1 ProntoQA: two unreadable replies -> structural.  gold horn: LLM ✗ final ✓ structural ✓
    # p2 FOLIO: the LLM says PYKE (horn).                 gold prover9: LLM ✗ final ✗ struct ✗
    # router accuracy = 1/3 = 33.33 %, final = 2/3 = 66.67 %, structural = 2/3 = 66.67 %
    llm = ScriptedLLM(
        {
            "lkg_construct": lambda m: js(HORN_EXTRACTION),
            "route": ["PYKE", "maybe clingo?", "I would pick something", "PYKE"],
            "codegen": lambda m: fenced(HORN_PROGRAM),
            "*": lambda m: "[]",
        }
    )
    records = [_record(0, "ProntoQA"), _record(1, "ProntoQA"), _record(2, "FOLIO")]
    method = SymbolLKGMethod("symbollkg", None, S)  # type: ignore[arg-type]
    await run(records, method, llm, tmp_path / "run", config={"dataset": "mixed"})
    rows = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    routes = [
        (r["extra"]["route_llm"], r["extra"]["route"], r["extra"]["route_source"]) for r in rows
    ]
    assert routes == [
        ("horn", "horn", "llm"),
        (None, "horn", "llm_fallback"),
        ("horn", "horn", "llm"),
    ]
    assert all(r["extra"]["route_structural"] == "horn" for r in rows)
    assert [r["correct"] for r in rows] == [True, True, True]
    m = load_run(tmp_path / "run").metrics
    assert m["router_questions"] == 3
    assert m["router_accuracy"] == pytest.approx(33.33)
    assert m["route_accuracy_final"] == pytest.approx(66.67)
    assert m["route_accuracy_structural"] == pytest.approx(66.67)


def test_gold_routes_follow_table5():
    assert [gold_route(d) for d in ("AR-LSAT", "LogicalDeduction", "FOLIO", "ProofWriter")] == [
        "z3", "z3", "prover9", "prover9",
    ]  # fmt: skip
    assert gold_route("ProntoQA") == "horn"  # Pyke's place is taken by the Horn engine
    assert gold_route("HotpotQA") is None and gold_route(None) is None


def test_metrics_skip_rows_they_do_not_apply_to():
    rows = [
        {"dataset": "HotpotQA", "extra": {"route": "z3", "route_llm": "z3", "route_structural": "z3"}},
        {"dataset": "FOLIO", "extra": {}},  # ended before the router: not counted
        {"dataset": "FOLIO", "extra": {"route": "prover9", "route_llm": "z3", "route_structural": "prover9"}},
        {"dataset": "HotpotQA", "recall@2": 0.5, "recall@5": 1.0},
        {"dataset": "HotpotQA", "recall@2": 0.0, "recall@5": 0.5},
    ]  # fmt: skip
    # router: 1 FOLIO row; LLM z3 ✗, final prover9 ✓, structural prover9 ✓
    # recall@2 = (0.5 + 0) / 2 = 25 %, recall@5 = (1 + 0.5) / 2 = 75 %
    assert lkg_metrics(rows) == {
        "recall@2": 25.0,
        "recall@5": 75.0,
        "router_questions": 1,
        "router_accuracy": 0.0,
        "route_accuracy_final": 100.0,
        "route_accuracy_structural": 100.0,
    }
    assert lkg_metrics([{"dataset": "HotpotQA", "em": 1.0}]) == {}
