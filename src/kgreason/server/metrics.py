"""Prometheus text exposition (format 0.0.4) of the server's counters, written here to keep
the server free of a metrics dependency. One `Metrics` per app; the event loop is the only
writer, so plain dicts suffice.

Every label value comes from a closed set, so no client can grow the series (and the
memory behind them): HTTP methods outside `METHODS` are "other", statuses outside 100-599
are "other", and the free-form values (routes, error kinds, LLM stages) must be plain
names and are capped at `MAX_LABEL_VALUES` distinct values each, the rest counted as
"other". Routes are already templates (the middleware never passes a raw path)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any

#: latency buckets in seconds (LLM-free questions take tens of ms, PoG with an LLM seconds)
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
USAGE_KEYS = ("calls", "prompt_tokens", "completion_tokens")

Labels = tuple[tuple[str, str], ...]
#: methods counted by name; any other is "other"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
#: distinct values one free-form label (route, kind, stage) may take before "other"
MAX_LABEL_VALUES = 64
_PLAIN = re.compile(r"[A-Za-z0-9_./{}:-]{1,80}")


class _Closed:
    """One free-form label's values: plain names, at most MAX_LABEL_VALUES of them."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, value: str) -> str:
        if value in self.seen:
            return value
        if len(self.seen) >= MAX_LABEL_VALUES or not _PLAIN.fullmatch(value):
            return "other"
        self.seen.add(value)
        return value


def method_label(method: str) -> str:
    return method if method in METHODS else "other"


def status_label(status: int) -> str:
    return str(status) if 100 <= status <= 599 else "other"


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt_labels(labels: Labels, extra: tuple[tuple[str, str], ...] = ()) -> str:
    items = (*labels, *extra)
    if not items:
        return ""
    return "{" + ",".join(f'{k}="{_esc(v)}"' for k, v in items) + "}"


def _num(v: float) -> str:
    if math.isinf(v):
        return "+Inf"
    return repr(float(v)) if not float(v).is_integer() else str(int(v))


class Histogram:
    def __init__(self) -> None:
        self.counts = [0] * len(BUCKETS)
        self.total = 0
        self.sum = 0.0

    def observe(self, v: float) -> None:
        self.total += 1
        self.sum += v
        for i, b in enumerate(BUCKETS):
            if v <= b:
                self.counts[i] += 1


class Metrics:
    def __init__(self) -> None:
        self.requests: dict[Labels, int] = defaultdict(int)
        self.latency: dict[Labels, Histogram] = defaultdict(Histogram)
        self.llm: dict[tuple[str, str], int] = defaultdict(int)  # (stage, key) -> total
        self.errors: dict[str, int] = defaultdict(int)
        self._route, self._stage, self._kind = _Closed(), _Closed(), _Closed()

    def record_request(self, route: str, method: str, status: int, seconds: float) -> None:
        route = self._route(route)
        labels = (("route", route), ("method", method_label(method)))
        self.requests[(*labels, ("status", status_label(status)))] += 1
        self.latency[(("route", route),)].observe(seconds)

    def record_usage(self, usage: dict[str, Any] | None) -> None:
        """A result's `usage` ({stage: {calls, prompt_tokens, ...}, "total": ...})."""
        for stage, u in (usage or {}).items():
            if stage == "total" or not isinstance(u, dict):
                continue
            label = self._stage(str(stage))
            for k in USAGE_KEYS:
                n = u.get(k, 0)
                self.llm[(label, k)] += n if isinstance(n, int) and n > 0 else 0

    def record_error(self, kind: str | None) -> None:
        if kind:
            self.errors[self._kind(str(kind))] += 1

    def render(self, gauges: dict[str, float] | None = None) -> str:
        out: list[str] = []

        def head(name: str, kind: str, help_: str) -> None:
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} {kind}")

        head("kgreason_http_requests_total", "counter", "HTTP requests by route, method, status.")
        for labels, n in sorted(self.requests.items()):
            out.append(f"kgreason_http_requests_total{_fmt_labels(labels)} {n}")
        name = "kgreason_http_request_duration_seconds"
        head(name, "histogram", "HTTP request latency (to the last byte) by route.")
        for labels, h in sorted(self.latency.items()):
            for b, c in zip(BUCKETS, h.counts, strict=True):
                out.append(f"{name}_bucket{_fmt_labels(labels, (('le', _num(b)),))} {c}")
            out.append(f"{name}_bucket{_fmt_labels(labels, (('le', '+Inf'),))} {h.total}")
            out.append(f"{name}_sum{_fmt_labels(labels)} {_num(h.sum)}")
            out.append(f"{name}_count{_fmt_labels(labels)} {h.total}")
        for key, help_ in (
            ("calls", "LLM calls by pipeline stage."),
            ("prompt_tokens", "LLM prompt tokens by pipeline stage."),
            ("completion_tokens", "LLM completion tokens by pipeline stage."),
        ):
            metric = f"kgreason_llm_{key}_total"
            head(metric, "counter", help_)
            for (stage, k), n in sorted(self.llm.items()):
                if k == key:
                    out.append(f"{metric}{_fmt_labels((('stage', stage),))} {n}")
        head(
            "kgreason_errors_total",
            "counter",
            "Named errors: results that ended early, and error responses, by kind.",
        )
        for kind, n in sorted(self.errors.items()):
            out.append(f"kgreason_errors_total{_fmt_labels((('kind', kind),))} {n}")
        for gname, v in (gauges or {}).items():
            head(gname, "gauge", gname.removeprefix("kgreason_").replace("_", " ") + ".")
            out.append(f"{gname} {_num(v)}")
        return "\n".join(out) + "\n"
