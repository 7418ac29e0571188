"""Accuracy broken down by the gold SPARQL query, as PoG's Figures 5-7.

- Figures 5-6: questions and accuracy per reasoning length (relations in the gold query,
  eval/gold_sparql.py), bins 1..7 and "8+" as the paper draws them.
- Figure 7: the overlap ratio of the relations on the method's paths with the gold query's
  (Appendix B.2), over the correctly answered questions (the paper's population), in the
  paper's bins 0, (0,25], (25,50], (50,75], (75,100), 100; accuracy per bin is shown beside
  it over every question with a ratio.
Only rows that carry the fields (datasets with a gold query: CWQ, GrailQA, WebQSP with
Parses) take part; a run without any gives an empty breakdown and the report leaves it out.

Also, for any dataset: Table 2 (accuracy of single- vs multi-entity questions, by the row's
topic entities) and Figure 8 (which phase produced each answer, and the share of the correct
answers whose evidence was the KG only, LLM-inspired KG or KG-inspired LLM).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from kgreason.eval.svg import bar_chart

LENGTH_BINS = ("1", "2", "3", "4", "5", "6", "7", "8+")
OVERLAP_BINS = ("0", "(0,25]", "(25,50]", "(50,75]", "(75,100)", "100")


def length_bin(n: int) -> str:
    return "8+" if n >= 8 else str(max(1, n))


def overlap_bin(ratio: float) -> str:
    pct = 100 * ratio
    if pct <= 0:
        return "0"
    if pct >= 100:
        return "100"
    for bound, label in ((25, "(0,25]"), (50, "(25,50]"), (75, "(50,75]")):
        if pct <= bound:
            return label
    return "(75,100)"


def is_correct(row: dict[str, Any]) -> bool:
    """The run's main score: accuracy for logic sets, strict Hits@1 otherwise."""
    return bool(row.get("correct", row.get("strict_hit1")))


def _pct(k: int, n: int) -> float:
    return round(100 * k / n, 2) if n else 0.0


def by_sparql_length(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """bin -> {n, accuracy (strict, %), lenient (%)} for rows with a gold query length."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if isinstance(r.get("sparql_length"), int):
            groups.setdefault(length_bin(r["sparql_length"]), []).append(r)
    return {
        b: {
            "n": len(g),
            "accuracy": _pct(sum(is_correct(r) for r in g), len(g)),
            "lenient": _pct(sum(bool(r.get("lenient_hit")) for r in g), len(g)),
        }
        for b in LENGTH_BINS
        if (g := groups.get(b))
    }


def by_relation_overlap(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """bin -> {n, accuracy (%), share_of_correct (% of correct rows with a ratio, Fig. 7)}."""
    rated = [r for r in rows if isinstance(r.get("relation_overlap"), int | float)]
    correct = [r for r in rated if is_correct(r)]
    out: dict[str, dict[str, float]] = {}
    for b in OVERLAP_BINS:
        g = [r for r in rated if overlap_bin(r["relation_overlap"]) == b]
        if not g:
            continue
        ok = sum(is_correct(r) for r in g)
        out[b] = {
            "n": len(g),
            "accuracy": _pct(ok, len(g)),
            "share_of_correct": _pct(ok, len(correct)),
        }
    return out


def markdown_sections(name: str, dataset: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    length = by_sparql_length(rows)
    if length:
        lines += [
            f"## {name}: accuracy by gold SPARQL length ({dataset}, PoG Figs 5-6)",
            "",
            "Length = relations in the gold query's triple patterns (eval/gold_sparql.py).",
            "",
            "| length | questions | Hits@1 strict (%) | lenient (%) |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {b} | {v['n']} | {v['accuracy']} | {v['lenient']} |" for b, v in length.items()
        ]
        lines.append("")
    overlap = by_relation_overlap(rows)
    if overlap:
        lines += [
            f"## {name}: relation overlap with the gold query ({dataset}, PoG Fig. 7)",
            "",
            "Overlap = |relations on the paths ∩ gold relations| / |gold relations| (Appendix "
            "B.2; type constraints such as common.topic.notable_types left out of the gold set).",
            "",
            "| overlap (%) | questions | Hits@1 strict (%) | share of correct answers (%) |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {b} | {v['n']} | {v['accuracy']} | {v['share_of_correct']} |"
            for b, v in overlap.items()
        ]
        lines.append("")
    return lines


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_sections(dataset: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    parts: list[str] = []
    length = by_sparql_length(rows)
    if length:
        parts.append(f"<h3>Accuracy by gold SPARQL length ({escape(dataset)})</h3>")
        parts.append(
            table(
                ["length", "questions", "Hits@1 strict (%)", "lenient (%)"],
                [[b, v["n"], v["accuracy"], v["lenient"]] for b, v in length.items()],
            )
        )
        parts.append(
            bar_chart(
                {f"{b} (n={v['n']})": v["accuracy"] for b, v in length.items()},
                title=f"Hits@1 by gold SPARQL length, {dataset} (%)",
            )
        )
    overlap = by_relation_overlap(rows)
    if overlap:
        parts.append("<h3>Relation overlap with the gold query</h3>")
        parts.append(
            table(
                ["overlap (%)", "questions", "Hits@1 strict (%)", "share of correct (%)"],
                [[b, v["n"], v["accuracy"], v["share_of_correct"]] for b, v in overlap.items()],
            )
        )
        parts.append(
            bar_chart(
                {b: v["share_of_correct"] for b, v in overlap.items()},
                title="relation overlap with the gold query: share of correct answers (%)",
            )
        )
    return parts


def comparison_rows(runs: Sequence[tuple[str, Sequence[dict[str, Any]]]]) -> list[list[str]]:
    """Length bin -> strict Hits@1 of each run ("–" where a run has no question of that
    length), for runs side by side as PoG's Fig. 6 draws PoG and PoG-E."""
    per_run = [by_sparql_length(rows) for _, rows in runs]
    out = []
    for b in LENGTH_BINS:
        if any(b in t for t in per_run):
            cells = [f"{t[b]['accuracy']} (n={t[b]['n']})" if b in t else "–" for t in per_run]
            out.append([b, *cells])
    return out


def comparison_markdown(runs: Sequence[tuple[str, Sequence[dict[str, Any]]]]) -> list[str]:
    """The side-by-side table, when at least two runs have gold query lengths."""
    with_lengths = [(n, r) for n, r in runs if by_sparql_length(r)]
    if len(with_lengths) < 2:
        return []
    names = [n for n, _ in with_lengths]
    return [
        "## Hits@1 by gold SPARQL length, runs side by side (PoG Fig. 6)",
        "",
        "| length | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
        *["| " + " | ".join(row) + " |" for row in comparison_rows(with_lengths)],
        "",
    ]


def comparison_html(runs: Sequence[tuple[str, Sequence[dict[str, Any]]]]) -> list[str]:
    with_lengths = [(n, r) for n, r in runs if by_sparql_length(r)]
    if len(with_lengths) < 2:
        return []
    return [
        "<h2>Hits@1 by gold SPARQL length, runs side by side</h2>",
        table(["length", *(n for n, _ in with_lengths)], comparison_rows(with_lengths)),
    ]


# --- PoG Table 2 (topic entities) and Figure 8 (answer evidence) ---------------------------

#: PoG's phases in the order Algorithm 1 runs them, and where Figure 8 puts their answers:
#: "KG only" (the answer read off KG paths), "LLM-inspired KG" (the LLM predicted it and the
#: KG paths to it verified it: phase 2), "KG-inspired LLM" (the paths were not sufficient and
#: the LLM completed them from its own knowledge: the final answer after phase 3)
PHASE_EVIDENCE = {
    "topic-entity-path": "KG only",
    "llm-supplement": "LLM-inspired KG",
    "node-expand": "KG only",
    "final-llm-knowledge": "KG-inspired LLM",
}
TOPIC_GROUPS = ("single-entity", "multi-entity", "no topic entity")


def topic_group(row: dict[str, Any]) -> str:
    """Table 2's split by the question's topic entities (the row's `topics`, as linked)."""
    topics = row.get("topics")
    n = len(set(topics)) if isinstance(topics, list) else 0
    return TOPIC_GROUPS[0] if n == 1 else TOPIC_GROUPS[1] if n > 1 else TOPIC_GROUPS[2]


def by_topic_count(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """group -> {n, accuracy (%), lenient (%)}; empty when no row names a topic entity."""
    if not any(topic_group(r) != TOPIC_GROUPS[2] for r in rows):
        return {}
    out: dict[str, dict[str, float]] = {}
    for name in TOPIC_GROUPS:
        g = [r for r in rows if topic_group(r) == name]
        if g:
            out[name] = {
                "n": len(g),
                "accuracy": _pct(sum(is_correct(r) for r in g), len(g)),
                "lenient": _pct(sum(bool(r.get("lenient_hit")) for r in g), len(g)),
            }
    return out


def by_phase(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """phase -> {evidence (Fig. 8 category, "–" outside PoG's phases), n, correct,
    accuracy (%), share_of_correct (% of all correct answers: Fig. 8's population)};
    PoG's phases first in Algorithm 1's order, then others, "none" (no phase) last."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(str(r.get("phase") or "none"), []).append(r)
    if set(groups) == {"none"}:
        return {}
    order = [p for p in PHASE_EVIDENCE if p in groups]
    order += sorted(p for p in groups if p not in PHASE_EVIDENCE and p != "none")
    order += ["none"] if "none" in groups else []
    n_correct = sum(is_correct(r) for r in rows)
    out: dict[str, dict[str, Any]] = {}
    for p in order:
        ok = sum(is_correct(r) for r in groups[p])
        out[p] = {
            "evidence": PHASE_EVIDENCE.get(p, "–"),
            "n": len(groups[p]),
            "correct": ok,
            "accuracy": _pct(ok, len(groups[p])),
            "share_of_correct": _pct(ok, n_correct),
        }
    return out


def evidence_shares(phases: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Figure 8 itself: each evidence category's share of the correct answers (%)."""
    total = sum(v["correct"] for v in phases.values())
    shares: dict[str, int] = {}
    for v in phases.values():
        if v["evidence"] != "–":
            shares[v["evidence"]] = shares.get(v["evidence"], 0) + v["correct"]
    return {k: _pct(n, total) for k, n in shares.items()}


def _topic_rows(t: dict[str, dict[str, float]]) -> list[list[object]]:
    return [[k, v["n"], v["accuracy"], v["lenient"]] for k, v in t.items()]


def _phase_rows(p: dict[str, dict[str, Any]]) -> list[list[object]]:
    return [
        [k, v["evidence"], v["n"], v["correct"], v["accuracy"], v["share_of_correct"]]
        for k, v in p.items()
    ]


TOPIC_HEADER = ("topic entities", "questions", "main score (%)", "lenient (%)")
PHASE_HEADER = ("phase", "evidence (Fig. 8)", "questions", "correct", "main score (%)",
                "share of correct (%)")  # fmt: skip


def _md_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|---" * len(header) + "|",
        *("| " + " | ".join(str(c) for c in row) + " |" for row in rows),
        "",
    ]


def evidence_markdown(name: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    """PoG's Table 2 and Figure 8 for one run (each left out when the rows cannot say)."""
    lines: list[str] = []
    topics = by_topic_count(rows)
    if topics:
        lines += [f"## {name}: single- vs multi-entity questions (PoG Table 2)", ""]
        lines += ["Topic entities = the row's `topics` (those the method explored).", ""]
        lines += _md_table(TOPIC_HEADER, _topic_rows(topics))
    phases = by_phase(rows)
    if phases:
        lines += [f"## {name}: where the answers came from (PoG Fig. 8)", ""]
        shares = evidence_shares(phases)
        if shares:
            text = ", ".join(f"{k} {v}%" for k, v in shares.items())
            lines += [f"Of the correct answers: {text}.", ""]
        lines += _md_table(PHASE_HEADER, _phase_rows(phases))
    return lines


def evidence_html(rows: Sequence[dict[str, Any]]) -> list[str]:
    parts: list[str] = []
    topics = by_topic_count(rows)
    if topics:
        parts.append("<h3>Single- vs multi-entity questions (PoG Table 2)</h3>")
        parts.append(table(TOPIC_HEADER, _topic_rows(topics)))
    phases = by_phase(rows)
    if phases:
        parts.append("<h3>Where the answers came from (PoG Fig. 8)</h3>")
        parts.append(table(PHASE_HEADER, _phase_rows(phases)))
        if shares := evidence_shares(phases):
            parts.append(bar_chart(shares, title="evidence of the correct answers (%)"))
    return parts


def evidence_json(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    phases = by_phase(rows)
    return {
        "by_topic_count": by_topic_count(rows),
        "by_phase": phases,
        "evidence_of_correct": evidence_shares(phases) if phases else {},
    }
