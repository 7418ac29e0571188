"""Parsing helpers every stage uses, and the re-ask-once-then-raise protocol.

Unparseable output is never turned into an empty result (which would look like "no answer"):
`ask_parsed` re-asks once with a format reminder, then raises `LLMOutputError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from kgreason.llm.base import ChatLLM, LLMOutputError, Message

T = TypeVar("T")

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)


#: Bounds on the JSON search, so a hostile reply cannot make it quadratic: replies longer
#: than this are not searched, and only the first `_MAX_STARTS` brackets open a candidate.
MAX_JSON_REPLY_CHARS = 100_000
_MAX_STARTS = 64


class ParseError(ValueError):
    """Raised by a parser when the text does not have the expected form."""


def _repair_json(s: str) -> str:
    s = s.strip()
    s = re.sub(r",\s*([}\]])", r"\1", s)  # trailing commas
    s = s.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    s = re.sub(r"\bTrue\b", "true", s)
    s = re.sub(r"\bFalse\b", "false", s)
    s = re.sub(r"\bNone\b", "null", s)
    # single-quoted keys/strings when no double quotes are present at all
    if '"' not in s and "'" in s:
        s = s.replace("'", '"')
    return s


def _balanced_spans(text: str) -> list[str]:
    """Candidate JSON spans: every balanced {...} or [...] region, outermost first."""
    spans: list[str] = []
    starts = [i for i, ch in enumerate(text) if ch in "{["][:_MAX_STARTS]
    for start in starts:
        ch = text[start]
        close = "}" if ch == "{" else "]"
        depth = 0
        in_str = False
        esc = False
        for i in range(start, len(text)):
            c = text[i]
            if in_str:
                if esc:
                    esc = False
                elif c == "\\":
                    esc = True
                elif c == '"':
                    in_str = False
                continue
            if c == '"':
                in_str = True
            elif c == ch:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    spans.append(text[start : i + 1])
                    break
    spans.sort(key=len, reverse=True)
    return spans


def extract_json(text: str) -> Any:
    """The JSON value in an LLM reply: fenced block, bare value, or value with trailing text;
    minor defects (trailing commas, smart quotes, Python literals) are repaired. Nesting too
    deep for the decoder, or a reply too long to search, is a ParseError like any other."""
    if len(text) > MAX_JSON_REPLY_CHARS:
        raise ParseError(
            f"reply of {len(text):,} characters is too long to search for JSON "
            f"(limit {MAX_JSON_REPLY_CHARS:,})"
        )
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text] + _balanced_spans(text)
    for cand in candidates:
        try:
            return json.loads(cand.strip())
        except (ValueError, RecursionError):
            pass
        try:
            value = json.loads(_repair_json(cand))
        except (ValueError, RecursionError):
            continue
        # Repairs are for structures only: a bare reply "None" or "True" is prose, not JSON,
        # and reading it as null would look like "no answer".
        if isinstance(value, dict | list):
            return value
    raise ParseError("no JSON value found in the reply")


def parse_yes_no(text: str) -> bool:
    """PoG's sufficiency verdict: `{Yes}` or `{No}` (braces required, case-insensitive).
    If both appear, the first one wins, as PoG's own parser reads the head of the reply."""
    m = re.search(r"\{\s*(yes|no)\s*\}", text, re.I)
    if not m:
        raise ParseError("reply has neither {Yes} nor {No}")
    return m.group(1).lower() == "yes"


def parse_braced_answers(text: str) -> list[str]:
    """PoG's answer form `answer: {A}` (possibly `{A, B}` or several braces after `answer:`)."""
    m = re.search(r"answer\s*:?\s*((?:\{[^{}]*\}\s*,?\s*(?:and\s*)?)+)", text, re.I)
    if not m:
        raise ParseError("reply has no 'answer: {...}'")
    items: list[str] = []
    for group in re.findall(r"\{([^{}]*)\}", m.group(1)):
        for part in group.split(","):
            part = part.strip().strip("'\"").strip()
            if part and part.lower() not in {"yes", "no"} and part not in items:
                items.append(part)
    if not items:
        raise ParseError("'answer: {...}' is empty")
    return items


async def ask_parsed(
    llm: ChatLLM,
    messages: list[Message],
    parser: Callable[[str], T],
    *,
    stage: str,
    reminder: str,
    temperature: float = 0.0,
    max_tokens: int | None = 256,
    sample: int = 0,
) -> tuple[T, str]:
    """Call the LLM and parse its reply; on a ParseError re-ask once with `reminder`.

    Returns (parsed value, raw text). Raises LLMOutputError naming the stage with the last
    raw reply attached, so the caller can record why the question ended.
    """
    c = await llm.complete(
        messages, stage=stage, temperature=temperature, max_tokens=max_tokens, sample=sample
    )
    try:
        return parser(c.text), c.text
    except ParseError as first:
        retry: list[Message] = [
            *messages,
            {"role": "assistant", "content": c.text},
            {"role": "user", "content": f"Your reply could not be read ({first}). {reminder}"},
        ]
        c2 = await llm.complete(
            retry, stage=stage, temperature=temperature, max_tokens=max_tokens, sample=sample
        )
        try:
            return parser(c2.text), c2.text
        except ParseError as second:
            raise LLMOutputError(
                f"stage '{stage}': unreadable reply after one re-ask: {second}",
                stage=stage,
                raw=c2.text,
            ) from None
