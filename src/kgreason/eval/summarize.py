"""Aggregate figures of a run: the numbers every report format shows."""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgreason.eval import rundir
from kgreason.eval.lkg_scores import LKG_LABELS, lkg_metrics


@dataclass
class RunFigures:
    name: str
    config: dict[str, Any]
    rows: list[dict[str, Any]]
    timings: dict[str, dict[str, Any]]
    metrics: dict[str, float | int | None] = field(default_factory=dict)
    by_group: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    calls_histogram: dict[int, int] = field(default_factory=dict)
    error_kinds: dict[str, int] = field(default_factory=dict)
    phases: dict[str, int] = field(default_factory=dict)


def _mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def _rate(rows: list[dict[str, Any]], key: str) -> float | None:
    vals = [bool(r[key]) for r in rows if key in r]
    return round(100 * sum(vals) / len(vals), 2) if vals else None


def load_run(path: Path) -> RunFigures:
    if not (path / rundir.RESULTS).is_file():
        raise rundir.RunDirError(f"{path} is not a run directory (no {rundir.RESULTS})")
    config = (
        json.loads((path / rundir.CONFIG).read_text("utf-8"))
        if (path / rundir.CONFIG).is_file()
        else {}
    )
    rows = rundir.read_jsonl_tolerant(path / rundir.RESULTS)
    timings = {t["id"]: t for t in rundir.read_jsonl_tolerant(path / rundir.TIMINGS)}
    fig = RunFigures(name=path.name, config=config, rows=rows, timings=timings)
    walls = [t["wall_s"] for t in timings.values()]
    fig.metrics = {
        "questions": len(rows),
        "strict_hit1": _rate(rows, "strict_hit1"),
        "lenient_hit": _rate(rows, "lenient_hit"),
        "any_hit": _rate(rows, "any_hit"),
        "accuracy": _rate(rows, "correct"),
        "em": _mean([100 * r["em"] for r in rows if "em" in r]),
        "f1": _mean([100 * r["f1"] for r in rows if "f1" in r]),
        "errors": sum(1 for r in rows if r.get("error_kind")),
        "mean_llm_calls": _mean([r["llm_calls"] for r in rows]),
        "mean_paper_calls": _mean([r["paper_calls"] for r in rows if "paper_calls" in r]),
        "mean_prompt_tokens": _mean([r["prompt_tokens"] for r in rows]),
        "mean_completion_tokens": _mean([r["completion_tokens"] for r in rows]),
        "median_wall_s": round(statistics.median(walls), 4) if walls else None,
        **lkg_metrics(rows),
    }
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {
        "hops": defaultdict(list),
        "qtype": defaultdict(list),
    }
    for r in rows:
        if r.get("hops") is not None:
            groups["hops"][str(r["hops"])].append(r)
        if r.get("qtype"):
            groups["qtype"][str(r["qtype"])].append(r)
    main = "correct" if rows and "correct" in rows[0] else "strict_hit1"
    for gname, g in groups.items():
        if g:
            fig.by_group[gname] = {
                k: {
                    "n": len(v),
                    main: _rate(v, main) or 0.0,
                    "lenient_hit": _rate(v, "lenient_hit") or 0.0,
                }
                for k, v in sorted(g.items())
            }
    fig.calls_histogram = dict(sorted(Counter(r["llm_calls"] for r in rows).items()))
    fig.error_kinds = dict(
        Counter(r["error_kind"] for r in rows if r.get("error_kind")).most_common()
    )
    fig.phases = dict(Counter(r["phase"] or "none" for r in rows).most_common())
    return fig


METRIC_LABELS = {
    "questions": "questions",
    "strict_hit1": "Hits@1 strict (%)",
    "lenient_hit": "lenient, paper-compatible (%)",
    "any_hit": "any answer exact (%)",
    "accuracy": "accuracy (%)",
    "em": "EM (%)",
    "f1": "F1 (%)",
    "errors": "questions ended by an error",
    "mean_llm_calls": "LLM calls / question (HTTP requests)",
    "mean_paper_calls": "LLM calls / question as the PoG paper counts (one per step)",
    "mean_prompt_tokens": "prompt tokens / question",
    "mean_completion_tokens": "completion tokens / question",
    "median_wall_s": "median wall time (s)",
    **LKG_LABELS,
}
