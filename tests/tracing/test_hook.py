"""The one tracing hook: both pipelines and the eval runner tell callbacks when each stage
starts and ends, with sizes, usage and errors; timings and the trace come from it."""

from __future__ import annotations

import pytest
from tests.lkg.test_pipeline_fixtures import HORN_CONTEXT, HORN_OPTIONS, HORN_QUESTION
from tests.pog.test_e2e_nijmegen import QUESTION, embedder, kg, script  # noqa: F401
from tests.tracing.scripts import horn_llm

from kgreason.lkg.pipeline import SymbolLKG
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.pipeline import PoG
from kgreason.pog.settings import PoGSettings
from kgreason.tracing import StageEvent, Tracer

POG_STAGES = ["topic_entity", "graph", "question_analysis", "exploration", "faithfulness"]
LKG_STAGES = ["construct", "retrieve", "route", "codegen"]


def _pairs(events: list[StageEvent]) -> list[tuple[str, str]]:
    return [(e.kind, e.stage) for e in events]


def test_tracer_times_notes_and_reports_errors() -> None:
    seen: list[StageEvent] = []
    tr = Tracer("demo", [seen.append])
    with tr.stage("a", items=3) as st:
        st.size(kept=2)
        st.note(picked=["x"])
    with pytest.raises(ValueError), tr.stage("b"):
        raise ValueError("bad input")
    with tr.stage("a"):
        pass
    assert _pairs(seen) == [("start", "a"), ("end", "a"), ("start", "b"), ("end", "b"),
                            ("start", "a"), ("end", "a")]  # fmt: skip
    assert seen[0].sizes == {"items": 3} and seen[1].sizes == {"items": 3, "kept": 2}
    assert seen[1].error is None and seen[3].error == "ValueError: bad input"
    assert set(tr.timings_s) == {"a", "b"}
    assert tr.timings_s["a"] >= seen[1].elapsed_s  # both runs of "a" are summed
    assert tr.trace == [{"stage": "a", "picked": ["x"]}]


def test_pog_stage_events_in_order_with_usage(kg, embedder) -> None:  # noqa: F811
    seen: list[StageEvent] = []
    r = PoG(kg, ScriptedLLM(script()), embedder, PoGSettings(), callbacks=[seen.append]).ask(
        QUESTION
    )
    assert r.ok, r.error
    assert _pairs(seen) == [(k, s) for s in POG_STAGES for k in ("start", "end")]
    ends = {e.stage: e for e in seen if e.kind == "end"}
    assert all(e.pipeline == "pog" and e.error is None for e in ends.values())
    # usage per stage is what the ledger recorded for it
    assert ends["question_analysis"].usage["calls"] == r.usage["question_analysis"]["calls"] == 1
    assert ends["topic_entity"].usage["calls"] == r.usage["topic_entity"]["calls"]
    assert ends["graph"].usage["calls"] == 0 and ends["graph"].sizes["triples"] > 0
    assert ends["exploration"].sizes["phase"] == r.phase
    # the result's timings and trace hang off the same hook
    for s in POG_STAGES:
        assert r.timings_s[s] >= 0.0
    assert [t["stage"] for t in r.trace[:2]] == ["topic_entity", "graph"]
    assert r.trace[0]["topics"] == [t.id for t in r.topic_entities]


def test_pog_stage_error_ends_the_stage_with_the_error(kg, embedder) -> None:  # noqa: F811
    seen: list[StageEvent] = []
    llm = ScriptedLLM(script(question_analysis=["I am not sure."] * 4))
    r = PoG(kg, llm, embedder, PoGSettings(), callbacks=[seen.append]).ask(QUESTION)
    assert r.error_kind == "llm-unreadable-reply"
    assert _pairs(seen)[-2:] == [("start", "question_analysis"), ("end", "question_analysis")]
    assert "LLMOutputError" in (seen[-1].error or "")
    assert "exploration" not in r.timings_s and "question_analysis" in r.timings_s


def test_symbollkg_stage_events_timings_and_trace() -> None:
    seen: list[StageEvent] = []
    pipe = SymbolLKG(horn_llm(), None, callbacks=[seen.append])
    r = pipe.solve(HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS)
    assert r.ok and r.status == "solved", r.error
    assert _pairs(seen) == [(k, s) for s in LKG_STAGES for k in ("start", "end")]
    assert list(r.timings_s) == LKG_STAGES
    ends = {e.stage: e for e in seen if e.kind == "end"}
    assert ends["construct"].usage["calls"] == r.usage["lkg_construct"]["calls"]
    assert ends["codegen"].sizes["attempts"] == len(r.attempts)
    assert {"stage": "route", "route": "horn"} in r.trace


def test_opentelemetry_never_imported_when_off() -> None:
    import os
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from kgreason.tracing import Tracer, call_span\n"
        "import kgreason.pog.pipeline, kgreason.lkg.pipeline, kgreason.eval.runner\n"
        "with Tracer('x').stage('s'), call_span('llm'):\n"
        "    pass\n"
        "print('opentelemetry' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KGREASON_OTEL"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
