"""The runner over the real pipelines: SymbolLKG with scripted replies, PoG's LLM-free mode."""

from pathlib import Path

from tests.lkg.test_pipeline_fixtures import (
    JAMIE_CONTEXT,
    JAMIE_EXTRACTION,
    JAMIE_FOL,
    JAMIE_QUESTION,
    HashEmbedder,
    fenced,
    js,
)
from tests.pog.graph_fixtures import HashingEmbedder, nijmegen_kg

from kgreason.eval import rundir
from kgreason.eval.adapters import PoGMethod, SymbolLKGMethod
from kgreason.eval.records import Answer, Record
from kgreason.eval.runner import run
from kgreason.lkg.settings import LKGSettings
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.settings import PoGSettings


async def test_symbollkg_through_the_runner(tmp_path: Path):
    llm = ScriptedLLM(
        {
            "lkg_construct": [js(JAMIE_EXTRACTION)],
            "*": lambda m: "[]",
            "route": ["PROVER9"],
            "codegen": [fenced(JAMIE_FOL)],
        }
    )
    rec = Record(
        id="jamie",
        dataset="FOLIO",
        task="logic",
        question=JAMIE_QUESTION,
        context=JAMIE_CONTEXT,
        options=["A) True", "B) False", "C) Uncertain"],
        label="C",
        answers=[Answer("C")],
    )
    method = SymbolLKGMethod("symbollkg", HashEmbedder(), LKGSettings(solver_timeout_s=10))
    await run([rec], method, llm, tmp_path / "r", config={"method": "symbollkg"})
    row = rundir.read_jsonl_tolerant(tmp_path / "r" / "results.jsonl")[0]
    assert row["answers"] == ["C"] and row["correct"] is True
    assert row["phase"] == "prover9"
    assert row["error_kind"] is None
    assert row["usage"]["codegen"]["calls"] == 1
    assert row["llm_calls"] == sum(u["calls"] for k, u in row["usage"].items() if k != "total")


async def test_llm_free_pog_through_the_runner(tmp_path: Path):
    kg = nijmegen_kg()
    rec = Record(
        id="fig1",
        dataset="toy",
        task="kgqa",
        question="What country bordering France contains an airport that serves Nijmegen?",
        answers=[Answer("Germany")],
    )
    method = PoGMethod("llm-free", kg, HashingEmbedder(), PoGSettings(), llm_free=True)
    await run([rec], method, None, tmp_path / "r", config={"method": "llm-free"})
    row = rundir.read_jsonl_tolerant(tmp_path / "r" / "results.jsonl")[0]
    assert row["answer_kind"] == "candidates"
    assert "Germany" in row["answers"]
    assert row["llm_calls"] == 0 and row["error_kind"] is None
    assert row["paths"] and all(len(t) == 3 for p in row["paths"] for t in p)
    assert {row["names"][t] for t in row["topics"]} == {"France", "Nijmegen"}
