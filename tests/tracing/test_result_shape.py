"""One result shape: PoGResult and SolveResult share ok, error_kind, error, trace, usage
and timings, serialised the same way (to_dict); the verbs have aliases both ways."""

from __future__ import annotations

import json

from tests.lkg.test_pipeline_fixtures import HORN_CONTEXT, HORN_OPTIONS, HORN_QUESTION
from tests.pog.test_e2e_nijmegen import QUESTION, embedder, kg, script  # noqa: F401
from tests.tracing.scripts import horn_llm

from kgreason.lkg.pipeline import SolveResult, SymbolLKG
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.pipeline import PoG
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import PoGResult
from kgreason.result import COMMON_KEYS, ResultBase


def test_both_results_share_the_base_and_keys(kg, embedder) -> None:  # noqa: F811
    pog = PoG(kg, ScriptedLLM(script()), embedder, PoGSettings()).ask(QUESTION)
    lkg = SymbolLKG(horn_llm(), None).solve(HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS)
    for r in (pog, lkg):
        assert isinstance(r, ResultBase) and r.ok and r.error_kind is None
        d = json.loads(json.dumps(r.to_dict()))  # JSON-ready as it is
        assert set(COMMON_KEYS) <= set(d) and d["ok"] is True
        assert d["timings_s"] == r.timings == r.timings_s and set(r.timings_s)
        assert d["usage"] and d["trace"]


def test_ok_follows_error_kind() -> None:
    assert not PoGResult(question="q", mode="pog", error_kind="kg-error").ok
    assert PoGResult(question="q", mode="llm-free").to_dict()["ok"] is True
    unsolved = SolveResult(question="q")
    assert unsolved.error_kind == "no-verdict" and not unsolved.ok
    err = SolveResult(question="q", status="error", error="boom")
    assert err.to_dict()["error_kind"] == "error" and err.to_dict()["ok"] is False
    assert SolveResult(question="q", status="solved", verdict="A").ok


def test_llm_error_is_named_in_solve_result() -> None:
    llm = ScriptedLLM({"lkg_construct": lambda m: "not json at all"})
    r = SymbolLKG(llm, None).solve(HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS)
    assert r.status == "error" and r.error_kind == "llm-unreadable-reply" and not r.ok
    assert "construct" in r.timings_s and "retrieve" not in r.timings_s


def test_verb_aliases() -> None:
    assert PoG.aask is PoG.ask_async
    assert SymbolLKG.solve_async is SymbolLKG.asolve
