"""The optional OpenTelemetry exporter: with KGREASON_OTEL=1 and the SDK's in-memory
exporter, one span per stage and one per LLM / solver call, nested under the stage."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.lkg.test_pipeline_fixtures import HORN_CONTEXT, HORN_OPTIONS, HORN_QUESTION
from tests.pog.test_e2e_nijmegen import QUESTION, embedder, kg, script  # noqa: F401
from tests.tracing.scripts import horn_llm

from kgreason.lkg.pipeline import SymbolLKG
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.pipeline import PoG
from kgreason.pog.settings import PoGSettings
from kgreason.tracing import OTEL_ENV, Tracer

pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra (opentelemetry-sdk) is absent")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

POG_STAGES = ["topic_entity", "graph", "question_analysis", "exploration", "faithfulness"]
LKG_STAGES = ["construct", "retrieve", "route", "codegen"]


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    """The process-wide tracer provider can be set once: this module sets it, to a provider
    exporting to memory (other tests never switch the exporter on)."""
    from opentelemetry import trace

    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    trace.set_tracer_provider(provider)
    if trace.get_tracer_provider() is not provider:
        pytest.skip("another tracer provider was installed earlier in this process")
    return exp


@pytest.fixture
def spans(exporter, monkeypatch) -> Iterator[InMemorySpanExporter]:
    monkeypatch.setenv(OTEL_ENV, "1")
    exporter.clear()
    yield exporter
    exporter.clear()


def _names(spans: Any) -> list[str]:
    return [s.name for s in spans.get_finished_spans()]


def test_off_by_default_no_spans(exporter, monkeypatch) -> None:
    monkeypatch.delenv(OTEL_ENV, raising=False)
    exporter.clear()
    with Tracer("demo").stage("a"):
        pass
    assert exporter.get_finished_spans() == ()


def test_pog_one_span_per_stage_and_llm_calls_nested(spans, kg, embedder) -> None:  # noqa: F811
    llm = ScriptedLLM(script())
    r = PoG(kg, llm, embedder, PoGSettings()).ask(QUESTION)
    assert r.ok, r.error
    finished = spans.get_finished_spans()
    stage_spans = [s for s in finished if s.name.startswith("kgreason.pog.")]
    assert sorted(s.name for s in stage_spans) == sorted(f"kgreason.pog.{s}" for s in POG_STAGES)
    llm_spans = [s for s in finished if s.name == "kgreason.llm"]
    assert len(llm_spans) == sum(u["calls"] for k, u in r.usage.items() if k != "total")
    by_id = {s.context.span_id: s for s in stage_spans}
    analysis = next(s for s in llm_spans if s.attributes["kgreason.stage"] == "question_analysis")
    assert by_id[analysis.parent.span_id].name == "kgreason.pog.question_analysis"
    graph = next(s for s in stage_spans if s.name == "kgreason.pog.graph")
    assert graph.attributes["kgreason.size.triples"] == r.subgraph.triples


def test_symbollkg_one_span_per_stage_and_a_solver_span(spans) -> None:
    r = SymbolLKG(horn_llm(), None).solve(HORN_CONTEXT, HORN_QUESTION, HORN_OPTIONS)
    assert r.ok, r.error
    names = _names(spans)
    assert [n for n in names if n.startswith("kgreason.lkg.")] == [
        f"kgreason.lkg.{s}" for s in LKG_STAGES
    ]
    solver = [s for s in spans.get_finished_spans() if s.name == "kgreason.solver"]
    assert solver and all(s.parent is not None for s in solver)


def test_failed_stage_span_has_error_status(spans, kg, embedder) -> None:  # noqa: F811
    from opentelemetry.trace import StatusCode

    llm = ScriptedLLM(script(question_analysis=["I am not sure."] * 4))
    r = PoG(kg, llm, embedder, PoGSettings()).ask(QUESTION)
    assert r.error_kind == "llm-unreadable-reply"
    failed = [s for s in spans.get_finished_spans() if s.status.status_code == StatusCode.ERROR]
    assert [s.name for s in failed] == ["kgreason.pog.question_analysis"]
