"""Text output of the LLM-free mode when a learned path ranker answers."""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel

from kgreason.pog.labels import RANKER_LABEL
from kgreason.pog.types import PoGResult


def ranker_trace(result: PoGResult) -> dict:
    return result.trace_record("ranker")


def print_ranker_line(out: Console, result: PoGResult) -> None:
    """Which ranking ordered the paths and why (the trace's llm-free record)."""
    rec = result.trace_record("llm-free")
    if rec.get("ranker"):
        out.print(f"Ranker: {rec['ranker']} ({rec.get('why', '')})", highlight=False, markup=False)


def print_ranker_answer(out: Console, result: PoGResult, shown: int = 20) -> None:
    """The answer set of the top path (with its set-level confidence) first; the paths
    printed after it are the evidence."""
    out.print(Panel(f"[bold yellow]{result.label or RANKER_LABEL}[/]", expand=False))
    print_ranker_line(out, result)
    names = [a.name for a in result.answers]
    more = f" (+{len(names) - shown} more)" if len(names) > shown else ""
    conf = ranker_trace(result).get("confidence")
    conf_text = f"   (confidence {conf:.2f})" if isinstance(conf, float) else ""
    out.print(f"[bold green]Answer[/]: {', '.join(names[:shown])}{more}{conf_text}")
