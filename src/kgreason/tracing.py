"""One tracing hook for both pipelines and the eval runner.

A `Tracer` wraps each stage in `with tracer.stage(name): ...`. It times the stage (the
result's `timings_s`), collects the stage's trace notes (the result's `trace`), measures
the LLM usage spent inside it, and tells every callback when the stage starts and ends
(with sizes, usage and the error, if any). `-v` logging (the `kgreason.<pipeline>.<stage>`
loggers), OpenTelemetry spans and progress bars are callbacks, so there is one place where
a stage begins and ends instead of hand-written timers per pipeline.

`call_span` is the same idea for single LLM, SPARQL and solver calls: a span when the
OpenTelemetry exporter is on, nothing otherwise (logging of those calls stays in their
modules).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from kgreason.llm.usage import UsageLedger

#: set to 1/true/yes to export spans with OpenTelemetry (needs the [otel] extra)
OTEL_ENV = "KGREASON_OTEL"

EventKind = Literal["start", "end"]


@dataclass(frozen=True)
class StageEvent:
    """What a callback sees. `end` events carry the time, sizes, usage and error."""

    kind: EventKind
    pipeline: str
    stage: str
    elapsed_s: float = 0.0
    sizes: dict[str, Any] = field(default_factory=dict)
    #: LLM usage spent inside the stage: calls, prompt_tokens, completion_tokens, cache_hits
    usage: dict[str, int] = field(default_factory=dict)
    #: "TypeName: message" when the stage raised
    error: str | None = None


class Callback(Protocol):
    def __call__(self, event: StageEvent) -> None: ...


@dataclass
class StageScope:
    """Handed to the body of a `with tracer.stage(...)` block."""

    sizes: dict[str, Any]
    notes: dict[str, Any] = field(default_factory=dict)

    def size(self, **sizes: Any) -> None:
        """Sizes reported with the end event (and logged): triples, paths, nodes..."""
        self.sizes.update(sizes)

    def note(self, **notes: Any) -> None:
        """Entries of the result's trace record for this stage."""
        self.notes.update(notes)


def _usage_totals(ledger: UsageLedger | None) -> dict[str, int]:
    if ledger is None:
        return {}
    t = ledger.total()
    return {
        "calls": t.calls,
        "prompt_tokens": t.prompt_tokens,
        "completion_tokens": t.completion_tokens,
        "cache_hits": t.cache_hits,
    }


def log_event(event: StageEvent) -> None:
    """The default callback: `kgreason.<pipeline>.<stage>` logs the end of each stage at
    INFO (time, sizes, LLM usage) and its start at DEBUG."""
    log = logging.getLogger(f"kgreason.{event.pipeline}.{event.stage}")
    if event.kind == "start":
        if log.isEnabledFor(logging.DEBUG):
            log.debug("start%s", f" {_fmt(event.sizes)}" if event.sizes else "")
        return
    if not log.isEnabledFor(logging.INFO):
        return
    parts = [f"{event.elapsed_s * 1000:.1f} ms"]
    if event.sizes:
        parts.append(_fmt(event.sizes))
    if event.usage.get("calls"):
        parts.append("llm " + _fmt(event.usage))
    if event.error:
        log.warning("failed after %s: %s", "; ".join(parts), event.error)
    else:
        log.info("done in %s", "; ".join(parts))


def _fmt(d: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in d.items())


class Tracer:
    """Per-question (or per-run) tracer: `timings_s` and `trace` end up in the result."""

    def __init__(
        self,
        pipeline: str,
        callbacks: Sequence[Callback] = (),
        *,
        ledger: UsageLedger | None = None,
    ):
        self.pipeline = pipeline
        self.ledger = ledger
        self.callbacks: list[Callback] = [log_event, *callbacks, *default_callbacks()]
        #: stage -> seconds, summed when a stage runs more than once
        self.timings_s: dict[str, float] = {}
        #: one record per stage that left notes: {"stage": name, **notes}
        self.trace: list[dict[str, Any]] = []

    def emit(self, event: StageEvent) -> None:
        for cb in self.callbacks:
            cb(event)

    @contextmanager
    def stage(self, name: str, **sizes: Any) -> Iterator[StageScope]:
        scope = StageScope(dict(sizes))
        before = _usage_totals(self.ledger)
        self.emit(StageEvent("start", self.pipeline, name, sizes=dict(sizes)))
        error: str | None = None
        t0 = time.perf_counter()
        try:
            yield scope
        except BaseException as e:
            error = f"{type(e).__name__}: {e}"
            raise
        finally:
            elapsed = time.perf_counter() - t0
            self.timings_s[name] = self.timings_s.get(name, 0.0) + elapsed
            if scope.notes:
                self.trace.append({"stage": name, **scope.notes})
            after = _usage_totals(self.ledger)
            usage = {k: after[k] - before.get(k, 0) for k in after}
            self.emit(
                StageEvent("end", self.pipeline, name, elapsed, dict(scope.sizes), usage, error)
            )


def otel_enabled() -> bool:
    return os.environ.get(OTEL_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def default_callbacks() -> list[Callback]:
    """The OpenTelemetry exporter when `KGREASON_OTEL` is set (and the package present)."""
    if not otel_enabled():
        return []
    from kgreason.otel import OtelCallback, otel_available

    return [OtelCallback()] if otel_available() else []


def call_span(kind: str, **attributes: Any) -> AbstractContextManager[object]:
    """A span named `kgreason.<kind>` (llm, sparql, solver) around one call, when the
    exporter is on; opentelemetry is never imported otherwise."""
    if not otel_enabled():
        return nullcontext()
    from kgreason.otel import otel_available, span

    return span(kind, attributes) if otel_available() else nullcontext()
