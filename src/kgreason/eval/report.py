"""`kgreason report`: Markdown and a self-contained HTML page for one or more runs."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from kgreason.eval import breakdown, rundir, taxonomy
from kgreason.eval.datasets import variant_label
from kgreason.eval.describe import run_fields, trained_note
from kgreason.eval.summarize import METRIC_LABELS, RunFigures, cap_text, load_run
from kgreason.eval.svg import bar_chart, path_graph

CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:4px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}.note{color:#555;font-size:90%}
svg text{font-size:12px}svg .rel{fill:#7a3b00}.empty{color:#777}
"""


def _fmt(v: Any) -> str:
    return "–" if v is None else f"{v:g}" if isinstance(v, float) else str(v)


def _metric_rows(runs: list[RunFigures]) -> list[list[str]]:
    keys = [k for k in METRIC_LABELS if any(r.metrics.get(k) is not None for r in runs)]
    return [[METRIC_LABELS[k], *(_fmt(r.metrics.get(k)) for r in runs)] for k in keys]


def _describe(r: RunFigures) -> str:
    """The run's KG and kgreason build (what it evaluated is in `_run_rows`)."""
    c = r.config
    kg = c.get("kg") or {}
    kg_text = f"{kg['name']} ({kg.get('fingerprint', '–')})" if kg.get("name") else "n/a"
    return (
        f"{r.name}: KG {kg_text}, kgreason {c.get('version') or 'not recorded'} "
        f"@ {str(c.get('git_revision') or 'not recorded')[:10]}"
    )


def _run_rows(runs: list[RunFigures]) -> list[list[str]]:
    """What each run evaluated (describe.run_fields: no field left blank), one row a field,
    and what became of the ranker's training questions."""
    fields = [dict(run_fields(r.config)) for r in runs]
    rows = [[k, *(f[k] for f in fields)] for k in fields[0]] if fields else []
    if any(r.config.get("variant") for r in runs):  # MuSiQue-Ans / MuSiQue-Full
        labels = [_variant(r.config) for r in runs]
        rows.insert(1 if rows else 0, ["variant", *labels])
    notes = [trained_note(r.config) for r in runs]
    if any(notes):
        rows.append(["ranker's training questions", *(n[0] if n else "n/a" for n in notes)])
    return rows


def _variant(config: dict[str, Any]) -> str:
    v = config.get("variant")
    defaulted = "variant" in (config.get("defaulted") or [])
    return variant_label(str(config.get("dataset")), str(v), defaulted) if v else "n/a"


def _warnings(runs: list[RunFigures]) -> list[str]:
    return [f"{r.name}: {n[0]}" for r in runs if (n := trained_note(r.config)) and n[1]]


def pick_question(run: RunFigures, question_id: str | None) -> dict[str, Any] | None:
    if question_id is not None:
        return next((r for r in run.rows if r["id"] == question_id), None)
    with_paths = [r for r in run.rows if r.get("paths")]
    good = [r for r in with_paths if r.get("strict_hit1") or r.get("correct")]
    pool = good or with_paths
    return pool[0] if pool else None


def markdown(runs: list[RunFigures], question_id: str | None = None) -> str:
    lines = ["# kgreason evaluation report", ""]
    lines += [f"**{w}**" for w in _warnings(runs)] + ([""] if _warnings(runs) else [])
    lines += ["| run | " + " | ".join(r.name for r in runs) + " |"]
    lines += ["|---" * (len(runs) + 1) + "|"]
    lines += [
        "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in _run_rows(runs)
    ]
    lines += [""] + [f"- {_describe(r)}" for r in runs]
    lines += ["", "| metric | " + " | ".join(r.name for r in runs) + " |"]
    lines += ["|---" * (len(runs) + 1) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in _metric_rows(runs)]
    lines += [
        "",
        "Strict Hits@1 compares the first answer with the gold answers and aliases after "
        "normalisation; the lenient score is ToG/PoG's containment check over the whole output "
        "and is shown only for comparison with published numbers.",
        "",
    ]
    lines += breakdown.comparison_markdown([(r.name, _kgqa_rows(r)) for r in runs])
    for r in runs:
        for gname, groups in r.by_group.items():
            lines += [
                f"## {r.name}: by {gname}",
                "",
                "| " + gname + " | n | main | lenient |",
                "|---|---|---|---|",
            ]
            for k, v in groups.items():
                main = v.get("correct", v.get("strict_hit1"))
                lines.append(f"| {k} | {v['n']} | {main} | {v['lenient_hit']} |")
            lines.append("")
        lines += [f"## {r.name}: LLM calls per question", "", "| calls | questions |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in r.calls_histogram.items()]
        lines += ["", f"## {r.name}: error kinds", ""]
        lines += [f"- {k}: {v}" for k, v in r.error_kinds.items()] or ["- none"]
        lines.append("")
        lines += _gold_sections_md(r)
        lines += breakdown.evidence_markdown(r.name, _kgqa_rows(r))
        lines += _bounds_md(r)
        q = pick_question(r, question_id)
        if q is not None:
            lines += [
                f"## {r.name}: question {q['id']}",
                "",
                f"Q: {q.get('question') or ''}",
                "",
                f"Answer ({q.get('answer_kind')}): {', '.join(q.get('answers') or []) or '–'}; gold: {q.get('gold')}",
                "",
            ]
            for p in q.get("paths") or []:
                names = q.get("names") or {}
                lines.append(
                    "- "
                    + " ; ".join(
                        f"({names.get(h, h)}, {rel}, {names.get(t, t)})" for h, rel, t in p
                    )
                )
            lines.append("")
    return "\n".join(lines)


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html(runs: list[RunFigures], question_id: str | None = None) -> str:
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>kgreason report</title><style>{CSS}</style></head><body>",
        "<h1>kgreason evaluation report</h1>",
        *(f"<p><strong>{escape(w)}</strong></p>" for w in _warnings(runs)),
        _table(["run", *(r.name for r in runs)], _run_rows(runs)),
        "<ul>" + "".join(f"<li>{escape(_describe(r))}</li>" for r in runs) + "</ul>",
        "<h2>Metrics</h2>",
        _table(["metric", *(r.name for r in runs)], _metric_rows(runs)),
        "<p class='note'>Strict Hits@1 is the headline; the lenient (paper-compatible) score counts a gold "
        "string anywhere in the output, as ToG and PoG do.</p>",
    ]
    parts += breakdown.comparison_html([(r.name, _kgqa_rows(r)) for r in runs])
    for r in runs:
        parts.append(f"<h2>{escape(r.name)}</h2>")
        for gname, groups in r.by_group.items():
            main = {k: v.get("correct", v.get("strict_hit1", 0.0)) for k, v in groups.items()}
            parts.append(bar_chart(main, title=f"accuracy by {gname} (%)"))
        parts.append(
            bar_chart(
                {str(k): v for k, v in r.calls_histogram.items()}, title="LLM calls per question"
            )
        )
        parts.append(bar_chart(dict(r.error_kinds), title="error kinds"))
        parts.append(bar_chart(dict(r.phases), title="answering phase / route"))
        parts += _gold_sections_html(r)
        parts += breakdown.evidence_html(_kgqa_rows(r))
        parts += _bounds_html(r)
        q = pick_question(r, question_id)
        if q is not None:
            topics = q.get("topics") or []
            parts.append(
                f"<h3>Question {escape(q['id'])}</h3><p>{escape(q.get('question') or '')}</p>"
            )
            parts.append(
                f"<p>{escape(q.get('answer_kind') or 'answer')}: {escape(', '.join(q.get('answers') or []) or '–')}; gold: {escape(str(q.get('gold')))}</p>"
            )
            parts.append(path_graph(q.get("paths") or [], q.get("names") or {}, topics=topics))
    parts.append("</body></html>")
    return "".join(parts)


def _kgqa_rows(r: RunFigures) -> list[dict[str, Any]]:
    return [row for row in r.rows if "strict_hit1" in row]


def _gold_sections_md(r: RunFigures) -> list[str]:
    """Gold-SPARQL breakdowns (PoG Figs 5-7) and the error taxonomy (Appendix B.3)."""
    rows = _kgqa_rows(r)
    if not rows:
        return []
    dataset = str(r.config.get("dataset") or "")
    return breakdown.markdown_sections(r.name, dataset, rows) + taxonomy.markdown_section(
        r.name, rows
    )


def _gold_sections_html(r: RunFigures) -> list[str]:
    rows = _kgqa_rows(r)
    if not rows:
        return []
    dataset = str(r.config.get("dataset") or "")
    return breakdown.html_sections(dataset, rows) + taxonomy.html_section(rows)


def bounds_sentence(r: RunFigures) -> str:
    b = r.bounds
    return (
        f"subgraph cap hit on {b['subgraph_hit']} of {b['questions']} questions "
        f"({cap_text(r.config)}); some bound hit on {b['hit']}"
    )


def _bound_rows(r: RunFigures) -> list[list[str]]:
    n = r.bounds["questions"]
    return [
        [k, str(v), f"{round(100 * v / n, 1) if n else 0.0}"]
        for k, v in r.bounds["by_kind"].items()
    ]


def _bounds_md(r: RunFigures) -> list[str]:
    """How often each bound cut a question (each question counted once a kind)."""
    if not r.bounds:
        return []
    lines = [f"## {r.name}: bounds hit", "", bounds_sentence(r) + ".", ""]
    if r.bounds["by_kind"]:
        lines += ["| bound | questions | % of questions |", "|---|---|---|"]
        lines += ["| " + " | ".join(row) + " |" for row in _bound_rows(r)]
        lines.append("")
    return lines


def _bounds_html(r: RunFigures) -> list[str]:
    if not r.bounds:
        return []
    parts = [f"<h3>Bounds hit</h3><p>{escape(bounds_sentence(r))}.</p>"]
    if r.bounds["by_kind"]:
        parts.append(_table(["bound", "questions", "% of questions"], _bound_rows(r)))
    return parts


def figures_json(run_dirs: list[Path]) -> list[dict[str, Any]]:
    """What `kgreason report --json` adds per run: Table 2, Figure 8 and the bounds."""
    out = []
    for d in run_dirs:
        r = load_run(d)
        out.append({"run": r.name, **breakdown.evidence_json(_kgqa_rows(r)), "bounds": r.bounds})
    return out


def write_report(
    run_dirs: list[Path], out: Path | None = None, question_id: str | None = None
) -> tuple[Path, Path]:
    runs = [load_run(d) for d in run_dirs]
    out = out or run_dirs[0]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise rundir.io_error(out, e) from None
    md, page = out / "report.md", out / "report.html"
    # only report.md / report.html are written: results.jsonl and the rest are read-only here
    rundir.write_atomic(md, markdown(runs, question_id))
    rundir.write_atomic(page, html(runs, question_id))
    return md, page
