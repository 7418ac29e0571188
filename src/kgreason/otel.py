"""The optional OpenTelemetry exporter (`pip install kgreason[otel]`, then
`KGREASON_OTEL=1`): a span per pipeline stage (`kgreason.<pipeline>.<stage>`) and per LLM,
SPARQL and solver call (`kgreason.llm`, `kgreason.sparql`, `kgreason.solver`).

Only imported by `kgreason.tracing` when the exporter is switched on. Spans go to whatever
tracer provider the application configured (the OpenTelemetry SDK's global one), so the
exporter, sampling and resource are the application's choice, not kgreason's.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (tracing imports this module when the exporter is on)
    from kgreason.tracing import StageEvent

TRACER_NAME = "kgreason"


def otel_available() -> bool:
    return importlib.util.find_spec("opentelemetry") is not None


def _tracer(tracer: Any = None) -> Any:
    if tracer is not None:
        return tracer
    from opentelemetry import trace

    return trace.get_tracer(TRACER_NAME)


def _attr(v: Any) -> Any:
    return v if isinstance(v, (str, bool, int, float)) else str(v)


class OtelCallback:
    """A tracing callback: opens a span on a stage's start event and ends it (with sizes,
    usage and error as attributes) on its end event. Stages nest as spans do: the open
    spans are kept per task (a context variable), so concurrent questions do not mix."""

    def __init__(self, tracer: Any = None):
        self.tracer = _tracer(tracer)
        self._open: ContextVar[tuple[tuple[Any, Any], ...]] = ContextVar(
            "kgreason_otel_spans", default=()
        )

    def __call__(self, event: StageEvent) -> None:
        from opentelemetry import context, trace

        if event.kind == "start":
            span = self.tracer.start_span(f"kgreason.{event.pipeline}.{event.stage}")
            for k, v in event.sizes.items():
                span.set_attribute(f"kgreason.size.{k}", _attr(v))
            token = context.attach(trace.set_span_in_context(span))
            self._open.set((*self._open.get(), (span, token)))
            return
        stack = self._open.get()
        if not stack:
            return
        (span, token), rest = stack[-1], stack[:-1]
        self._open.set(rest)
        for k, v in event.sizes.items():
            span.set_attribute(f"kgreason.size.{k}", _attr(v))
        for k, v in event.usage.items():
            span.set_attribute(f"kgreason.llm.{k}", v)
        if event.error:
            span.set_status(trace.Status(trace.StatusCode.ERROR, event.error))
        span.end()
        context.detach(token)


@contextmanager
def span(kind: str, attributes: dict[str, Any], tracer: Any = None) -> Iterator[Any]:
    """One call's span, `kgreason.<kind>`, a child of the current stage's span."""
    with _tracer(tracer).start_as_current_span(f"kgreason.{kind}") as s:
        for k, v in attributes.items():
            s.set_attribute(f"kgreason.{k}", _attr(v))
        yield s
