"""SymbolLKG's run figures: Recall@2/5 of multi-hop QA (paper Table 3, eq. 3) and router
accuracy (paper Table 5) when the gold route of the dataset is known.

Table 5 has no per-question gold: its ground truth is one solver per dataset, "the design
intent of the three engines". The same table is used here (Pyke's place is taken by our
Horn engine, `horn`). Three accuracies are reported, each over the questions that reached
the router: the LLM router's own choice (what Table 5 measures; an unreadable reply counts
as wrong), the final route after fallbacks and the statement-options override, and the
deterministic structural router's choice.

Accuracy on a logic set is reported under both backup settings of an unsolved problem
(`lkg.backup_answer`): "none" (it counts wrong; the paper is silent, kgreason's default) and
"random" (Logic-LM's protocol: a seeded random option). Both come from the same rows: a row
answered by the backup (`extra.backup`, or unsolved with an answer) is wrong under "none";
an unsolved row without an answer is scored under "random" by the letter it records
(`extra.backup_answer`). When an unsolved row records neither, "random" is not reported.
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
    "accuracy_backup_none": "accuracy, unsolved counts wrong (%)",
    "accuracy_backup_random": "accuracy, random backup for unsolved (Logic-LM) (%)",
    "backup_rows": "unsolved problems (backup applies)",
}
#: error kinds of a logic row the solver gave no verdict for
_UNSOLVED = frozenset({"unsolved", "error", "no-verdict"})


def recall_scores(retrieved: list[str], supporting: list[str]) -> dict[str, float]:
    """`recall@2`, `recall@5` of one question's ranked titles; none without gold titles
    (eq. 3 is undefined there, and a 0 would pull the mean down)."""
    if not supporting:
        return {}
    return {f"recall@{k}": recall_at_k(retrieved, supporting, k) for k in RECALL_KS}


def gold_route(dataset: str | None) -> str | None:
    return TABLE5_GOLD_ROUTES.get(re.sub(r"[^a-z0-9]", "", (dataset or "").lower()))


def _extra(r: dict[str, Any]) -> dict[str, Any]:
    extra = r.get("extra")
    return extra if isinstance(extra, dict) else {}


def _is_backup(r: dict[str, Any]) -> bool:
    """Was the row's answer the random backup (not the solver's verdict)?"""
    extra = _extra(r)
    if extra.get("backup"):
        return True
    return r.get("error_kind") in _UNSOLVED and bool(r.get("answers"))


def backup_accuracies(rows: list[dict[str, Any]]) -> dict[str, float | int]:
    """`accuracy_backup_none` / `accuracy_backup_random` over SymbolLKG's logic rows
    (those scored `correct`), and how many were unsolved (`backup_rows`)."""
    logic = [r for r in rows if "correct" in r and r.get("method") == "symbollkg"]
    if not logic:
        return {}
    none: list[bool] = []
    rand: list[bool] | None = []
    backups = 0
    for r in logic:
        extra = _extra(r)
        backup = _is_backup(r)
        unsolved = backup or r.get("error_kind") in _UNSOLVED or not r.get("answers")
        backups += unsolved
        none.append(bool(r["correct"]) and not backup)
        if rand is None:
            continue
        if backup or not unsolved:
            rand.append(bool(r["correct"]))
        elif extra.get("backup_answer") is not None:
            rand.append(extra["backup_answer"] == r.get("gold"))
        else:  # the letter was not recorded: the random figure cannot be computed
            rand = None
    out: dict[str, float | int] = {"accuracy_backup_none": _pct(none) or 0.0}
    if rand is not None:
        out["accuracy_backup_random"] = _pct(rand) or 0.0
    out["backup_rows"] = backups
    return out


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
    out.update(backup_accuracies(rows))
    if routed:
        out["router_questions"] = len(routed)
        out["router_accuracy"] = _pct([e.get("route_llm") == g for e, g in routed])
        out["route_accuracy_final"] = _pct([e.get("route") == g for e, g in routed])
        out["route_accuracy_structural"] = _pct([e["route_structural"] == g for e, g in routed])
    return out
