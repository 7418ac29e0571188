"""PrecisePathSelect (section 4.3): the LLM picks the top-W candidate paths.

Candidates are shown numbered (`Path i: ...`) in batches of at most BATCH paths, as PoG's
code does, so one prompt never carries W1 = 80 long paths; when the batches together keep
more than W paths, one more call chooses among the survivors. The reply is
`top_list: {Path 2, Path 5, ...}`; out-of-range and repeated numbers are dropped, and a reply
naming no valid path is unreadable (re-ask once, then LLMOutputError).

One PrecisePathSelect is one LLM call as the paper counts them (Algorithm 2 calls it once per
selection), however many batches it takes: the batches are raw calls, the selection is one
paper call (llm/usage.py). PoG's released code sends the same 40-path batches and counts
each one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError
from kgreason.llm.schema import load_stage_schema
from kgreason.llm.usage import paper_step
from kgreason.pog.llm_common import QuestionContext, call_stage, paths_field
from kgreason.pog.settings import PoGSettings

BATCH = 40

REMINDER = "Reply with one line: top_list: {Path i, Path j, ...} using the numbers shown."

#: the head of `top_list: {...}` up to its opening bracket. Possessive quantifiers (spaces,
#: colon and bracket are different characters, so giving any back never helps): without
#: them "top_list" and a long run of spaces was retried at every split of the run
_LIST_HEAD = re.compile(r"top[ _-]?list[\"']?\s*+:?+\s*+[\{\[(]", re.I)
_CLOSERS = re.compile(r"[\}\])]")
_NUM = re.compile(r"(?:path\s*)?(\d+)", re.I)


def _listed(text: str) -> str | None:
    """The inside of the first `top_list: {...}` (what the lazy `(.*?)` before a closing
    bracket matched): the text up to the first closing bracket after the head. With no closing
    bracket after the first head there is none after any later head either, so the search
    stops there instead of rescanning the rest of the reply from every head."""
    head = _LIST_HEAD.search(text)
    if head is None:
        return None
    close = _CLOSERS.search(text, head.end())
    return None if close is None else text[head.end() : close.start()]


def parse_top_list(text: str, n_candidates: int, width: int) -> list[int]:
    """0-based indices of the chosen paths, best first, at most `width`."""
    listed = _listed(text)
    if listed is None:
        raise ParseError("reply has no 'top_list: {Path i, ...}'")
    chosen: list[int] = []
    digits = len(str(n_candidates))
    for num in _NUM.findall(listed):
        # more digits than any path number is out of range (and int() refuses > 4,300)
        if len(num.lstrip("0")) > digits:
            continue
        i = int(num.lstrip("0") or "0") - 1
        if 0 <= i < n_candidates and i not in chosen:
            chosen.append(i)
    if not chosen:
        raise ParseError(f"top_list names no path between 1 and {n_candidates}")
    return chosen[:width]


async def _select_once(
    llm: ChatLLM, ctx: QuestionContext, rendered: Sequence[str], width: int, s: PoGSettings
) -> list[int]:
    value, _ = await call_stage(
        llm,
        "precise_select",
        s,
        lambda text: parse_top_list(text, len(rendered), width),
        REMINDER,
        schema=load_stage_schema("kgreason.pog", "precise_select"),
        **ctx.fields(),
        width=str(width),
        paths=paths_field(rendered, numbered=True),
    )
    return value


async def precise_select(
    llm: ChatLLM,
    ctx: QuestionContext,
    rendered: Sequence[str],
    width: int,
    settings: PoGSettings,
) -> list[int]:
    """Indices (into `rendered`) of the top-`width` paths, best first. No call when the
    candidates already fit in `width`; one paper call however many batches."""
    with paper_step(llm, "precise_select"):
        return await _select(llm, ctx, rendered, width, settings)


async def _select(
    llm: ChatLLM,
    ctx: QuestionContext,
    rendered: Sequence[str],
    width: int,
    settings: PoGSettings,
) -> list[int]:
    if len(rendered) <= width:
        return list(range(len(rendered)))
    if len(rendered) <= BATCH:
        return await _select_once(llm, ctx, rendered, width, settings)
    survivors: list[int] = []
    for start in range(0, len(rendered), BATCH):
        batch = rendered[start : start + BATCH]
        picked = await _select(llm, ctx, batch, width, settings)
        survivors.extend(start + i for i in picked)
    if len(survivors) <= width:
        return survivors
    final = await _select_once(llm, ctx, [rendered[i] for i in survivors], width, settings)
    return [survivors[i] for i in final]
