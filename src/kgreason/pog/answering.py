"""Question answering (section 4.4): path summarising, the sufficiency evaluation
(`{Yes}`/`{No}`), answer generation from the paths and the model's own knowledge (Appendix
E), and the final answer when no phase found sufficient paths.

With `settings.summary` (the default, the paper's "w/ Path Summarizing") the summary REPLACES
the raw paths in the evaluation, answer and final-answer prompts: section 4.4 answers "based on
the current reasoning path derived from path pruning and summarizing", Appendix E's templates
have one {Related Paths} slot, and Table 6 reports fewer input tokens with the summary. With
`summary=False` (Table 6's "w/o Path Summarizing") there is no summarise call and the prompts
show the raw paths.

The verdict is Algorithm 1's `"{Yes}" in Answer` (`sufficiency_verdict = "anywhere"`; "first"
lets the first verdict win). Every reply must have its expected form (`summary:`,
`{Yes}`/`{No}`, `answer: {...}`); an unreadable reply is re-asked once and then ends the
question with LLMOutputError, never an empty answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError, parse_braced_answers, parse_yes_no
from kgreason.llm.schema import load_stage_schema
from kgreason.pog.llm_common import QuestionContext, call_stage, paths_field
from kgreason.pog.settings import PoGSettings

_YES = re.compile(r"\{\s*yes\s*\}", re.I)
_SUMMARY = re.compile(r"summary\s*:\s*(.+)", re.I | re.S)


def parse_summary(text: str) -> str:
    m = _SUMMARY.search(text)
    body = (m.group(1) if m else "").strip()
    if not body:
        raise ParseError("reply has no 'summary: ...'")
    return body


def parse_sufficiency(text: str, reading: Literal["anywhere", "first"] = "anywhere") -> bool:
    """The sufficiency verdict. "anywhere" is the paper's: Algorithm 1 returns when
    `"{Yes}" in Answer`, so a reply weighing `{No}` for one split question and then `{Yes}`
    is sufficient; "first" lets the first braced verdict win. Case and spaces inside the
    braces are ignored; a reply with no braced verdict is read as `parse_yes_no` reads it
    (a bare leading `Yes.`/`No`), anything else is a ParseError."""
    if reading == "anywhere" and _YES.search(text):
        return True
    return parse_yes_no(text)


@dataclass(frozen=True)
class Verdict:
    sufficient: bool
    summary: str
    raw: str


async def summarize(
    llm: ChatLLM, ctx: QuestionContext, rendered: Sequence[str], settings: PoGSettings
) -> str:
    value, _ = await call_stage(
        llm,
        "summarise",
        settings,
        parse_summary,
        'Reply starting with "summary:" followed by the chain of triples.',
        schema=load_stage_schema("kgreason.pog", "summarise"),
        **ctx.fields(),
        paths=paths_field(rendered),
    )
    return value


def evidence(rendered: Sequence[str], summary: str, settings: PoGSettings) -> str:
    """What the answering prompts show as Related Paths: the summary, or the raw paths."""
    return summary if settings.summary else paths_field(rendered)


async def evaluate(
    llm: ChatLLM, ctx: QuestionContext, rendered: Sequence[str], settings: PoGSettings
) -> Verdict:
    """Summarise the paths (unless `summary` is off), then ask whether they suffice (the
    paper's QuestionAnswering check)."""
    summary = await summarize(llm, ctx, rendered, settings) if settings.summary else ""
    ok, raw = await call_stage(
        llm,
        "evaluate",
        settings,
        lambda text: parse_sufficiency(text, settings.sufficiency_verdict),
        "Reply starting with {Yes} or {No} (with the braces).",
        schema=load_stage_schema("kgreason.pog", "evaluate"),
        **ctx.fields(),
        paths=evidence(rendered, summary, settings),
    )
    return Verdict(ok, summary, raw)


async def generate_answer(
    llm: ChatLLM,
    ctx: QuestionContext,
    rendered: Sequence[str],
    summary: str,
    settings: PoGSettings,
) -> tuple[list[str], str]:
    """(answer names, raw reply) from paths judged sufficient (or their summary)."""
    return await call_stage(
        llm,
        "answer",
        settings,
        parse_braced_answers,
        "Reply as: answer: {name 1, name 2} then reason: ...",
        schema=load_stage_schema("kgreason.pog", "answer"),
        **ctx.fields(),
        paths=evidence(rendered, summary, settings),
    )


async def final_answer(
    llm: ChatLLM, ctx: QuestionContext, rendered: Sequence[str], settings: PoGSettings
) -> tuple[list[str], str]:
    """(answer names, raw reply) from the paths (summarised first, as for the other answering
    prompts, when there are paths and `summary` is on) plus the model's own knowledge."""
    summary = ""
    if settings.summary and rendered:
        summary = await summarize(llm, ctx, rendered, settings)
    return await call_stage(
        llm,
        "final_answer",
        settings,
        parse_braced_answers,
        "Reply as: answer: {name 1, name 2} then reason: ...",
        schema=load_stage_schema("kgreason.pog", "final_answer"),
        **ctx.fields(),
        paths=evidence(rendered, summary, settings) or "(none)",
    )


#: the most comma-separated parts one rejoined name may have ("Portland, Oregon, United
#: States" has 3): every span is tried as a name, so this bounds the work on a reply
#: listing many items (unbounded, a 100,000-item answer meant ~10^15 character reads)
MAX_NAME_PARTS = 8


def rejoin_names(names: Sequence[str], known: Callable[[str], bool]) -> list[str]:
    """Adjacent answer items whose comma-joined form is a known name, and which are not all
    known names themselves, are one name again: a model that writes `answer: {Washington,
    D.C.}` without quotes means one entity, and PoG's `{A, B}` form split it. Greedy, the
    longest span (of at most MAX_NAME_PARTS items) first; `known` is "an entity on the
    answer's paths has this name"."""
    single = [known(x) for x in names]
    out: list[str] = []
    i = 0
    while i < len(names):
        for j in range(min(len(names), i + MAX_NAME_PARTS), i + 1, -1):
            joined = ", ".join(names[i:j])
            if known(joined) and not all(single[i:j]):
                out.append(joined)
                i = j
                break
        else:
            out.append(names[i])
            i += 1
    return out
