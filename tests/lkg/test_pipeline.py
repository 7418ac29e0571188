"""SymbolLKG failure paths: every malformed reply or exhausted budget ends as a result
that says why (no exception escapes into a batch)."""

import pytest
from tests.lkg.test_pipeline_fixtures import (
    HORN_CONTEXT,
    HORN_EXTRACTION,
    HORN_OPTIONS,
    HORN_PROGRAM,
    HORN_QUESTION,
    JAMIE_CONTEXT,
    JAMIE_QUESTION,
    fenced,
    js,
)

from kgreason.lkg.pipeline import LKGNeedsLLM, SymbolLKG, answer_to_verdict
from kgreason.lkg.settings import LKGSettings
from kgreason.lkg.storage import LKGStore
from kgreason.llm.testing import ScriptedLLM
from kgreason.llm.usage import Budget

S = LKGSettings(solver_timeout_s=5, solver_memory_mb=512, max_repairs=1)


def test_no_llm_is_a_clear_error():
    with pytest.raises(LKGNeedsLLM, match="--program"):
        SymbolLKG(None).solve(JAMIE_CONTEXT, JAMIE_QUESTION)


async def test_unreadable_extraction_ends_the_problem():
    llm = ScriptedLLM({"lkg_construct": ["Sorry, I can't.", "Still no JSON"]})
    r = await SymbolLKG(llm, settings=S).asolve(JAMIE_CONTEXT, JAMIE_QUESTION)
    assert r.status == "error" and "lkg_construct" in r.error
    assert r.usage["lkg_construct"]["calls"] == 2 and r.verdict is None


async def test_budget_stops_work_and_is_reported():
    llm = ScriptedLLM({"lkg_construct": [js(HORN_EXTRACTION)], "*": lambda m: "[]"})
    r = await SymbolLKG(llm, settings=S, budget=Budget(max_calls=2)).asolve(
        HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS
    )
    assert r.status == "error" and "LLMBudgetExceeded" in r.error
    assert r.usage["total"]["calls"] == 2


async def test_malformed_route_and_program_replies():
    llm = ScriptedLLM(
        {
            "lkg_construct": [js(HORN_EXTRACTION)],
            "query_entities": ["Max?", "still not a list"],
            "prune": ["n1, n2", "no"],
            "route": ["maybe clingo?", "I would pick something"],
            "codegen": ["The answer is False."],
            "repair": ["I already told you: False."],
        }
    )
    r = await SymbolLKG(llm, settings=S).asolve(HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS)
    assert r.status == "unsolved" and r.verdict is None
    assert r.route.source == "llm_fallback" and r.route.route == "horn"
    assert len(r.attempts) == 2 and all(a.status == "parse_error" for a in r.attempts)
    assert "no program" in r.error
    notes = " ".join(r.subgraph.notes)
    assert "query_entities" in notes and "prune" in notes


async def test_retrieval_from_a_persistent_store(tmp_path):
    from kgreason.lkg.construction import extraction_to_graph
    from kgreason.lkg.types import Extraction

    st = LKGStore(tmp_path / "lkg")
    st.add_document(
        HORN_CONTEXT, extraction_to_graph(Extraction.model_validate(HORN_EXTRACTION), HORN_CONTEXT)
    )
    llm = ScriptedLLM({"*": lambda m: "[]", "route": ["PYKE"], "codegen": [fenced(HORN_PROGRAM)]})
    r = await SymbolLKG(llm, settings=S, prune=False).asolve(
        "", HORN_QUESTION, HORN_OPTIONS, store=st
    )
    assert "lkg_construct" not in r.usage
    assert r.verdict == "B" and r.lkg_counts["rule"] == 3
    prompt = next(c for c in llm.calls if c.stage == "codegen").messages[0]["content"]
    assert "Wumpuses are not sour." in prompt  # reached through the hull, from "Max"


def test_sync_solve_and_answer_mapping():
    llm = ScriptedLLM(
        {"lkg_construct": [js(HORN_EXTRACTION)], "*": lambda m: "[]", "route": ["PYKE"],
         "codegen": [fenced(HORN_PROGRAM)]}
    )  # fmt: skip
    r = SymbolLKG(llm, settings=S).solve(HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS, id="p1")
    assert (r.id, r.verdict) == ("p1", "B")
    assert answer_to_verdict("Unknown", ["A) True", "B) False", "C) Uncertain"]) == "C"
    assert answer_to_verdict("Unknown", ["A) True", "B) False"]) is None
    assert answer_to_verdict("True", None) == "True"
