"""SymbolLKG's run figures: Recall@2/5 of multi-hop QA (paper Table 3, eq. 3) and router
accuracy (paper Table 5) when the gold route of the dataset is known.

Table 5 has no per-question gold: its ground truth is one solver per dataset, "the design
intent of the three engines". The same table is used here (Pyke's place is taken by our
Horn engine, `horn`). Three accuracies are reported, each over the questions that reached
the router: the LLM router's own choice (what Table 5 measures; an unreadable reply counts
as wrong), the final route after fallbacks and the statement-options override, and the
deterministic structural router's choice.
"""

from __future__ import annotations

import re
from typing import Any

from kgreason.eval.metrics import RECALL_KS, recall_at_k

#: paper Table 5: dataset -> the solver its problems should go to
TABLE5_GOLD_ROUTES: dict[str, str] = {
    "arlsat": "z3",
    "logicaldeduction": "z3",
    "folio": "prover9",
    "proofwriter": "prover9",
    "prontoqa": "horn",
}

LKG_LABELS = {
    **{f"recall@{k}": f"Recall@{k} (%)" for k in RECALL_KS},
    "router_questions": "questions routed (gold route known)",
    "router_accuracy": "router accuracy, LLM's own choice (%)",
    "route_accuracy_final": "route accuracy after fallbacks (%)",
    "route_accuracy_structural": "structural router accuracy (%)",
}


def recall_scores(retrieved: list[str], supporting: list[str]) -> dict[str, float]:
    """`recall@2`, `recall@5` of one question's ranked titles; none without gold titles
    (eq. 3 is undefined there, and a 0 would pull the mean down)."""
    if not supporting:
        return {}
    return {f"recall@{k}": recall_at_k(retrieved, supporting, k) for k in RECALL_KS}


def gold_route(dataset: str | None) -> str | None:
    return TABLE5_GOLD_ROUTES.get(re.sub(r"[^a-z0-9]", "", (dataset or "").lower()))


def _pct(hits: list[bool]) -> float | None:
    return round(100 * sum(hits) / len(hits), 2) if hits else None


def lkg_metrics(rows: list[dict[str, Any]]) -> dict[str, float | int | None]:
    """Recall@k means (rows that have them) and router accuracies (rows with a route
    decision and a known gold route); keys absent when nothing applies."""
    out: dict[str, float | int | None] = {}
    for k in RECALL_KS:
        vals = [100 * r[f"recall@{k}"] for r in rows if f"recall@{k}" in r]
        if vals:
            out[f"recall@{k}"] = round(sum(vals) / len(vals), 4)
    routed = [
        (r["extra"], gold)
        for r in rows
        if isinstance(r.get("extra"), dict)
        and "route_structural" in r["extra"]
        and (gold := gold_route(r.get("dataset"))) is not None
    ]
    if routed:
        out["router_questions"] = len(routed)
        out["router_accuracy"] = _pct([e.get("route_llm") == g for e, g in routed])
        out["route_accuracy_final"] = _pct([e.get("route") == g for e, g in routed])
        out["route_accuracy_structural"] = _pct([e["route_structural"] == g for e, g in routed])
    return out
