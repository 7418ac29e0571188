"""PoG's error taxonomy (Appendix B.3), derived from a run's rows.

The paper sorts wrong answers into four types: (1) answer generation error, "when PoG
provides an accurate reasoning path, but the LLM fails to extract the correct answer from
it"; (2) refuse error; (3) format error; (4) other hallucination errors. It does not publish
its rules, so these are ours, applied in this order to every row whose main score (strict
Hits@1, or accuracy for logic sets) is false:

1. run error (outside the paper's four): the question ended by an error that is not about
   the reply's form: KG errors, unknown entities, unreachable endpoint, budget...;
2. format error: the reply could not be read even after a re-ask (`llm-unreadable-reply`,
   `unparseable_reply`);
3. refuse error: no answer, or every answer is a refusal ("unknown", "none", "not
   available", "cannot be determined", "insufficient information", "I don't know"...);
4. answer generation error: a gold answer is an entity on the method's reasoning paths
   (compared by name after SQuAD normalisation), yet the answer given is another;
5. other hallucination error: everything else, split by `reason` into "no path" (the
   method returned no reasoning path: its answer came from the LLM alone) and "gold not on
   paths" (it answered from paths that do not reach a gold answer).
Limits: the gold check uses the gold names kept in the row (no aliases) and the names of the
path entities; an answer that is a literal value absent from `names` cannot be matched, so
its row lands in (5).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from kgreason.eval.breakdown import is_correct, table
from kgreason.eval.metrics import normalize_answer
from kgreason.eval.svg import bar_chart

RUN_ERROR = "run error"
FORMAT = "format error"
REFUSE = "refuse error"
ANSWER_GENERATION = "answer generation error"
HALLUCINATION = "other hallucination error"
CATEGORIES = (ANSWER_GENERATION, REFUSE, FORMAT, HALLUCINATION, RUN_ERROR)
FORMAT_KINDS = frozenset({"llm-unreadable-reply", "unparseable_reply"})
#: a refusal word must be the whole answer ("Unknown Pleasures" is an album, not a refusal)
_REFUSAL_WORD = re.compile(r"^\W*(?:unknown|none|n/?a|no answer|unanswerable|nothing)\W*$", re.I)
#: a refusal sentence may go on ("Cannot be determined from the given paths")
_REFUSAL_SENTENCE = re.compile(
    r"^\W*(?:not (?:available|known|sure|provided|applicable|found|enough information)|"
    r"(?:cannot|can't|could not|unable to) (?:be )?(?:determine|answer|find|say|identif)\w*|"
    r"insufficient (?:information|data|evidence)|i (?:do not|don't|cannot) know|"
    r"no (?:relevant )?(?:information|data|evidence))\b",
    re.I,
)


def is_refusal(answer: str) -> bool:
    return bool(_REFUSAL_WORD.match(answer) or _REFUSAL_SENTENCE.match(answer))


def _gold_names(row: dict[str, Any]) -> set[str]:
    gold = row.get("gold")
    names = gold if isinstance(gold, list) else [gold] if isinstance(gold, str) else []
    return {normalize_answer(g) for g in names if isinstance(g, str) and normalize_answer(g)}


def _path_names(row: dict[str, Any]) -> set[str]:
    names = row.get("names") or {}
    out: set[str] = set()
    for path in row.get("paths") or []:
        for triple in path:
            for x in (triple[0], triple[2]) if len(triple) == 3 else ():
                out.add(normalize_answer(str(names.get(x, x))))
    return out


def classify(row: dict[str, Any]) -> tuple[str, str] | None:
    """(category, reason) for a wrong row; None for a correct one."""
    if is_correct(row):
        return None
    kind = row.get("error_kind")
    if kind in FORMAT_KINDS:
        return FORMAT, str(kind)
    if kind:
        return RUN_ERROR, str(kind)
    answers = [a for a in row.get("answers") or [] if isinstance(a, str) and a.strip()]
    if not answers:
        return REFUSE, "no answer"
    if all(is_refusal(a) for a in answers):
        return REFUSE, "refused"
    if not row.get("paths"):
        return HALLUCINATION, "no path"
    if _gold_names(row) & _path_names(row):
        return ANSWER_GENERATION, "gold on paths"
    return HALLUCINATION, "gold not on paths"


def taxonomy(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """category -> {reason: count} over the wrong rows, categories in the paper's order."""
    counts: Counter[tuple[str, str]] = Counter()
    for r in rows:
        c = classify(r)
        if c is not None:
            counts[c] += 1
    out: dict[str, dict[str, int]] = {}
    for cat in CATEGORIES:
        reasons = {reason: n for (c, reason), n in sorted(counts.items()) if c == cat}
        if reasons:
            out[cat] = reasons
    return out


def markdown_section(name: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    tax = taxonomy(rows)
    lines = [f"## {name}: error taxonomy (PoG Appendix B.3)", ""]
    if not tax:
        return [*lines, "- no wrong answer", ""]
    lines += ["| error type | reason | questions |", "|---|---|---|"]
    for cat, reasons in tax.items():
        lines += [f"| {cat} | {reason} | {n} |" for reason, n in reasons.items()]
    lines += ["", "Rules: eval/taxonomy.py (run errors are outside the paper's four types).", ""]
    return lines


def html_section(rows: Sequence[dict[str, Any]]) -> list[str]:
    tax = taxonomy(rows)
    flat = [[cat, reason, n] for cat, reasons in tax.items() for reason, n in reasons.items()]
    return [
        "<h3>Error taxonomy (PoG Appendix B.3)</h3>",
        table(["error type", "reason", "questions"], flat) if flat else "<p>no wrong answer</p>",
        bar_chart({cat: sum(r.values()) for cat, r in tax.items()}, title="wrong answers by type"),
    ]
