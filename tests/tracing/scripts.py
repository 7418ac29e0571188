"""Scripted LLMs shared by the tracing tests."""

from __future__ import annotations

from tests.lkg.test_pipeline_fixtures import HORN_EXTRACTION, HORN_PROGRAM, fenced, js

from kgreason.llm.testing import ScriptedLLM


def horn_llm() -> ScriptedLLM:
    """SymbolLKG's Horn case: extraction, routing to the rule engine, one good program."""
    return ScriptedLLM(
        {
            "lkg_construct": lambda m: js(HORN_EXTRACTION),
            "query_entities": lambda m: "[]",
            "prune": lambda m: "[]",
            "route": lambda m: "PYKE",
            "codegen": lambda m: fenced(HORN_PROGRAM),
            "repair": lambda m: "no program",
        }
    )
