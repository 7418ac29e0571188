"""Accuracy broken down by the gold SPARQL query, as PoG's Figures 5-7.

- Figures 5-6: questions and accuracy per reasoning length (relations in the gold query,
  eval/gold_sparql.py), bins 1..7 and "8+" as the paper draws them.
- Figure 7: the overlap ratio of the relations on the method's paths with the gold query's
  (Appendix B.2), over the correctly answered questions (the paper's population), in the
  paper's bins 0, (0,25], (25,50], (50,75], (75,100), 100; accuracy per bin is shown beside
  it over every question with a ratio.
Only rows that carry the fields (datasets with a gold query: CWQ, GrailQA, WebQSP with
Parses) take part; a run without any gives an empty breakdown and the report leaves it out.
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
