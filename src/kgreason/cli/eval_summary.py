"""The headline table `kgreason eval` prints when a run ends: the scores that apply to the
dataset (strict Hits@1 beside the lenient paper-compatible score, any-hit, accuracy,
EM/F1), how many questions were computed, already done, ended by an error or skipped as
malformed, and the wall time. Above them, what was evaluated (dataset, split, hops,
method, LLM, ranker, sample) and what became of the questions the ranker was trained on;
below, a per-hop breakdown when several hop counts ran, and how many questions hit each
bound (the subgraph cap first: "subgraph cap hit on N of M questions"). The same go into
`--json` under "headline"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from kgreason.cli.common import console
from kgreason.eval.datasets import variant_label
from kgreason.eval.describe import run_fields, trained_note
from kgreason.eval.summarize import cap_text, load_run

#: (key in RunFigures.metrics, label); a metric absent from the dataset's rows is not shown
SCORES = (
    ("strict_hit1", "Hits@1 strict (%)"),
    ("lenient_hit", "lenient, paper-compatible (%)"),
    ("any_hit", "any answer exact (%)"),
    ("accuracy", "accuracy (%)"),
    ("em", "EM (%)"),
    ("f1", "F1 (%)"),
    ("recall@2", "Recall@2 (%)"),
    ("recall@5", "Recall@5 (%)"),
    ("router_accuracy", "router accuracy, LLM's own choice (%)"),
)


def headline(out: Path, summary: Any, skipped: int, wall_s: float) -> dict[str, Any]:
    """Scores over every question in the run directory (including ones a resumed run
    had already done), and this command's counts."""
    fig = load_run(out)
    metrics = fig.metrics
    note = trained_note(fig.config)
    by_hops = fig.by_group.get("hops", {})
    by_answerable = fig.by_group.get("answerable", {})
    return {
        "run": run_rows(fig.config),
        "by_answerable": by_answerable if len(by_answerable) > 1 else {},
        "trained_note": note[0] if note else None,
        "trained_warning": bool(note and note[1]),
        "by_hops": by_hops if len(by_hops) > 1 else {},
        "questions": metrics["questions"],
        "scores": {k: metrics[k] for k, _ in SCORES if metrics.get(k) is not None},
        "computed": summary.computed,
        "already_done": summary.done_before,
        "failed": summary.errors,
        "mean_llm_calls": metrics.get("mean_llm_calls"),
        "mean_paper_calls": metrics.get("mean_paper_calls"),
        "bounds": {**fig.bounds, "cap": cap_text(fig.config)} if fig.bounds else {},
        "skipped": skipped,
        "wall_s": round(wall_s, 2),
    }


def run_rows(config: dict[str, Any]) -> dict[str, str]:
    """describe.run_fields, and the dataset's variant right after the dataset when it has
    one (MuSiQue)."""
    fields = dict(run_fields(config))
    if not config.get("variant"):
        return fields
    label = variant_label(
        str(config.get("dataset")), str(config["variant"]),
        "variant" in (config.get("defaulted") or []),
    )  # fmt: skip
    out: dict[str, str] = {}
    for k, v in fields.items():
        out[k] = v
        if k == "dataset":
            out["variant"] = label
    return out if "variant" in out else {**out, "variant": label}


def _of(n: int, bounds: dict[str, Any]) -> str:
    return f"{n} of {bounds['questions']} questions"


def print_headline(h: dict[str, Any], method: str) -> None:
    run = h.get("run") or {}
    table = Table("metric", "value", title=f"{method}: {h['questions']} questions")
    for label, value in run.items():
        table.add_row(label, value)
    if h.get("trained_note"):
        style = "bold yellow" if h.get("trained_warning") else None
        table.add_row("ranker's training questions", h["trained_note"], style=style)
    table.add_section()
    labels = dict(SCORES)
    if method == "llm-free":  # retrieval figures, not PoG's accuracy
        labels["strict_hit1"] = "candidate Hits@1 (%)"
        labels["any_hit"] = "gold among candidates (%)"
    for key, value in h["scores"].items():
        table.add_row(labels[key], f"{value:.2f}")
    main, label = ("correct", "accuracy") if "accuracy" in h["scores"] else ("strict_hit1",) * 2
    for hop, g in (h.get("by_hops") or {}).items():
        table.add_row(f"  {hop}-hop: {labels[label]}", f"{g[main]:.2f} (n={g['n']})")
    for kind, g in (h.get("by_answerable") or {}).items():
        table.add_row(f"  {kind}: {labels[label]}", f"{g[main]:.2f} (n={g['n']})")
    table.add_row("computed", str(h["computed"]))
    if h["already_done"]:
        table.add_row("already done (resumed)", str(h["already_done"]))
    table.add_row("failed (ended by an error)", str(h["failed"]))
    if h.get("mean_llm_calls"):  # raw requests beside the PoG paper's count
        table.add_row("LLM calls / question (HTTP)", f"{h['mean_llm_calls']:.2f}")
        if h.get("mean_paper_calls") is not None:
            table.add_row("LLM calls / question (paper)", f"{h['mean_paper_calls']:.2f}")
    bounds = h.get("bounds") or {}
    if bounds:
        table.add_row(f"subgraph cap hit ({bounds['cap']})", _of(bounds["subgraph_hit"], bounds))
        for kind, n in bounds["by_kind"].items():
            if kind != "subgraph":
                table.add_row(f"bound hit: {kind}", _of(n, bounds))
    table.add_row("skipped (malformed records)", str(h["skipped"]))
    table.add_row("wall time (s)", f"{h['wall_s']:.2f}")
    console().print(table)
    if h.get("trained_note"):  # also below the table, where a glance at the scores ends
        console().print(h["trained_note"], style="bold yellow" if h["trained_warning"] else None)
