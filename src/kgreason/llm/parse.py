"""Parsing helpers every stage uses, and the re-ask-once-then-raise protocol.

Unparseable output is never turned into an empty result (which would look like "no answer"):
`ask_parsed` re-asks once with a format reminder, then raises `LLMOutputError`. Replies are
read leniently in the shapes real models produce (think tags, code fences, prose around the
value, Markdown emphasis, JSON defects fixed by `json-repair`, values cut at the token limit),
and strictly in what they mean: the stage parser decides, and an empty or partial reading is
a ParseError. tests/llm/robustness/ holds the reply shapes this is checked against.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

import json_repair

from kgreason.llm.base import CallOptions, ChatLLM, LLMOutputError, Message
from kgreason.llm.schema import SchemaMismatch, StageSchema

T = TypeVar("T")

_FENCE = re.compile(r"```(?:json|JSON|jsonc|json5)?[ \t]*\n?(.*?)```", re.S)
_QUOTE = re.compile("[\"'\u201c\u201d\u2018\u2019]")
_LITERAL = re.compile(r"\b(?:true|false|null|True|False|None)\b")

#: Bounds on the JSON search, so a hostile reply cannot make it quadratic: replies longer
#: than this are not searched, and only the first `_MAX_STARTS` brackets open a candidate.
MAX_JSON_REPLY_CHARS = 100_000
_MAX_STARTS = 64
#: at most this many candidates go through the (slower, lenient) repair pass, and none
#: nested deeper than `_MAX_DEPTH` (no model reply nests that deep; a hostile one might)
_MAX_REPAIRS = 8
_MAX_DEPTH = 64


class ParseError(ValueError):
    """Raised by a parser when the text does not have the expected form."""


def _balanced_spans(text: str) -> tuple[list[str], list[str]]:
    """Candidate JSON spans: balanced {...} or [...] regions, as (top-level spans, longest
    first; spans nested inside another). A nested span is read only when no top-level one
    is JSON: `[]` inside `{'a': []}` is part of the value, not the value."""
    top: list[str] = []
    inner: list[str] = []
    covered = -1
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
                    (inner if start < covered else top).append(text[start : i + 1])
                    covered = max(covered, i)
                    break
    top.sort(key=len, reverse=True)
    inner.sort(key=len, reverse=True)
    return top, inner


def _scan(text: str) -> tuple[int | None, int, int | None]:
    """(start of the outermost bracket still open at the end, deepest nesting, start of an
    unterminated string), reading strings in double quotes as JSON does."""
    stack: list[int] = []
    deepest = 0
    str_start: int | None = None
    esc = False
    for i, c in enumerate(text):
        if str_start is not None:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                str_start = None
            continue
        if c == '"':
            str_start = i
        elif c in "{[":
            stack.append(i)
            deepest = max(deepest, len(stack))
        elif c in "}]" and stack:
            stack.pop()
    return (stack[0] if stack else None), deepest, str_start


def _trim_truncated(tail: str) -> str:
    """A value cut at the token limit, trimmed back to its last complete item: an
    unterminated string (it may be a cut-off name) and a dangling key, comma or bare token
    are dropped, never completed; json-repair then closes the brackets."""
    str_start = _scan(tail)[2]
    # an open string is cut where it began; else a number or literal that may be cut
    tail = tail[:str_start] if str_start is not None else re.sub(r"[\w.+-]+\s*$", "", tail)
    for _ in range(3):  # "key": / trailing commas
        tail = tail.rstrip()
        if tail.endswith(":"):
            tail = re.sub(r"\"[^\"]*\"\s*:$", "", tail)
        tail = tail.rstrip().rstrip(",")
    return tail


def _repairable(cand: str) -> bool:
    """Repair only what looks like JSON: quoted strings, or numbers and literals only.
    `{Yes}` or `{E7: Moonlight Sonata}` in prose are not JSON with defects."""
    if _QUOTE.search(cand):
        return True
    return not re.search(r"[A-Za-z]", _LITERAL.sub("", cand))


def _repair(cand: str) -> Any:
    """json-repair's reading of `cand` if it is a non-empty object or array, else None."""
    if len(cand) > MAX_JSON_REPLY_CHARS or _scan(cand)[1] > _MAX_DEPTH or not _repairable(cand):
        return None
    try:
        value = json_repair.loads(cand)
    except (ValueError, RecursionError, IndexError, TypeError):
        return None
    # Repairs are for structures only: a bare reply "None" or "True" is prose, not JSON,
    # and reading it as null would look like "no answer"; an empty repair read nothing.
    return value if isinstance(value, dict | list) and value else None


def extract_json(text: str) -> Any:
    """The JSON value in an LLM reply: fenced block, bare value, or value with text around
    it. Defects models make (single or smart quotes, trailing commas, comments, Python
    literals, unquoted keys) are repaired with the `json-repair` library; a value cut at
    the token limit is closed after its last complete item. Nesting too deep, or a reply
    too long to search, is a ParseError like any other."""
    if len(text) > MAX_JSON_REPLY_CHARS:
        raise ParseError(
            f"reply of {len(text):,} characters is too long to search for JSON "
            f"(limit {MAX_JSON_REPLY_CHARS:,})"
        )
    fences = [m.group(1) for m in _FENCE.finditer(text)]
    open_at, deepest, _ = _scan(text)
    top, inner = _balanced_spans(text if open_at is None else text[:open_at])
    whole = [text] if open_at is None else []
    for cand in [*fences, *whole]:
        try:
            return json.loads(cand.strip())
        except (ValueError, RecursionError):
            pass
    if open_at is not None and deepest <= _MAX_DEPTH:  # cut at the token limit
        value = _repair(_trim_truncated(text[open_at:]))
        if value is not None:
            return value
    repairs = 0
    for cand in [*fences, *top, *whole]:
        try:
            return json.loads(cand.strip())
        except (ValueError, RecursionError):
            pass
        if repairs < _MAX_REPAIRS:
            repairs += 1
            value = _repair(cand.strip())
            if value is not None:
                return value
    for cand in inner:
        try:
            return json.loads(cand.strip())
        except (ValueError, RecursionError):
            pass
    raise ParseError("no JSON value found in the reply")


_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.I)
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_EMPHASIS = re.compile(r"\*\*|__|(?<!`)`(?!`)")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.M)
_FENCE_LINE = re.compile(r"^[ \t]*```[\w-]*[ \t]*$\n?", re.M)


def drop_thinking(text: str) -> str:
    """`text` without its reasoning (see `strip_thinking`); "" if it was only reasoning."""
    out = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(out))
    if closes:
        out = out[closes[-1].end() :]
    opened = _THINK_OPEN.search(out)
    if opened:
        out = out[: opened.start()]
    return out.strip()


def strip_thinking(text: str) -> str:
    """The reply without its reasoning: `<think>...</think>` blocks (DeepSeek-R1, Qwen3,
    QwQ; also `<thinking>`/`<reasoning>`) are removed; text before a lone `</think>` is
    reasoning whose opening tag was in the chat template; an unclosed `<think>` means the
    reply was cut while still reasoning, so everything after it is dropped. A reply that
    was nothing but reasoning is a ParseError (re-ask), never read as an answer."""
    out = drop_thinking(text)
    if not out and text.strip():
        raise ParseError("the reply is only reasoning in <think> tags, with no answer after it")
    return out


def plain_markdown(text: str) -> str:
    """The reply without Markdown code-fence lines, emphasis and heading marks
    (`**answer:** {X}`, `# Answer`), which models add around fixed-format answers."""
    return _HEADING.sub("", _EMPHASIS.sub("", _FENCE_LINE.sub("", text))).strip()


_VERDICT = re.compile(r"\{\s*(yes|no)\s*\}", re.I)
#: a bare verdict opening the reply and ending its sentence or line: "Yes.", "NO", "No!",
#: "Answer: No" ("Yes, probably" hedges: that is re-asked)
_LEADING_VERDICT = re.compile(
    r"^[\s>\"'(\[]*(?:(?:answer|a|verdict|sufficient)\s*:\s*)?(yes|no)[ \t]*(?:[.!]|\r?\n|$)",
    re.I,
)


def parse_yes_no(text: str) -> bool:
    """PoG's sufficiency verdict: `{Yes}` or `{No}` (case-insensitive); the first one wins,
    as PoG's own parser reads the head of the reply. Without braces, a reply that opens with
    a bare verdict ending its sentence or line (`Yes.`, `NO`, `**No.** The paths...`) is
    read the same way; anything else (`Yes, probably`, `No information is missing`) is a
    ParseError."""
    m = _VERDICT.search(text) or _LEADING_VERDICT.search(plain_markdown(text))
    if not m:
        raise ParseError("reply has neither {Yes} nor {No}")
    return m.group(1).lower() == "yes"


_ITEM = re.compile(r'\s*("(?:[^"\\]|\\.)*"|[^,]*)\s*(,|$)')


def split_items(group: str) -> list[str]:
    """The items of `{a, b, "c, d"}`'s inside: split at commas, except inside a double-quoted
    item (JSON string syntax), which is how a name with a comma ("Washington, D.C.") stays
    one item; stray quotes around unquoted items are dropped. Empty items are skipped."""
    out: list[str] = []
    pos = 0
    while True:
        m = _ITEM.match(group, pos)
        assert m is not None  # both alternatives accept "", so every position matches
        raw = m.group(1)
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            try:
                raw = json.loads(raw)
            except ValueError:
                raw = raw[1:-1]
        item = raw.strip().strip("'\"").strip()
        if item:
            out.append(item)
        if not m.group(2):
            break
        pos = m.end()
    return out


def parse_braced_answers(text: str) -> list[str]:
    """PoG's answer form `answer: {A}` (possibly `{A, B}` or several braces after `answer:`);
    Markdown emphasis around it (`**Answer:** {A}`) is ignored."""
    text = plain_markdown(text)
    m = re.search(r"answer\s*:?\s*((?:\{[^{}]*\}\s*,?\s*(?:and\s*)?)+)", text, re.I)
    if not m:
        raise ParseError("reply has no 'answer: {...}'")
    items: list[str] = []
    for group in re.findall(r"\{([^{}]*)\}", m.group(1)):
        for part in split_items(group):
            if part.lower() not in {"yes", "no"} and part not in items:
                items.append(part)
    if not items:
        raise ParseError("'answer: {...}' is empty")
    return items


def read_reply(text: str, parser: Callable[[str], T], schema: StageSchema | None = None) -> T:
    """Parse one reply the way every stage does; ParseError if no reading works.

    1. Reasoning in think tags is dropped (`strip_thinking`).
    2. With a schema: a JSON value in the reply that satisfies it is rendered into the
       stage's own form (`StageSchema.render`) and parsed; constrained servers reply so.
    3. The stage parser reads the reply as text (servers that ignored the schema, plain
       prompting, or a model that answered in the prompt's format anyway). Stages with a
       fixed text form (no schema, or a schema with a `reply` template) read it without
       Markdown fences, emphasis and headings first (`**Answer:** {X}`), then as sent;
       JSON stages read it as sent first (emphasis marks can be inside JSON strings).
    The stage parser has the last word in every path: the schema never replaces its checks.
    """
    body = strip_thinking(text)
    if schema is not None:
        try:
            return parser(schema.render(extract_json(body)))
        except (ParseError, SchemaMismatch):
            pass
    plain = plain_markdown(body)
    text_form = schema is None or schema.reply is not None
    readings = [plain, body] if text_form else [body, plain]
    errors: list[ParseError] = []
    for reading in dict.fromkeys(readings):
        try:
            return parser(reading)
        except ParseError as e:
            errors.append(e)
    raise errors[0]


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
    schema: StageSchema | None = None,
) -> tuple[T, str]:
    """Call the LLM and parse its reply (`read_reply`); on a ParseError re-ask once with
    `reminder`. With `schema`, the request carries its JSON schema (sent to servers that can
    constrain decoding, and part of cache keys); the reply is still parsed and checked.

    Returns (parsed value, raw text). Raises LLMOutputError naming the stage with the last
    raw reply attached, so the caller can record why the question ended.
    """
    opts: CallOptions = {
        "stage": stage,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "sample": sample,
    }
    if schema is not None:  # only when set: test doubles need not know the option
        opts["schema"] = schema.schema
    c = await llm.complete(messages, **opts)
    try:
        return read_reply(c.text, parser, schema), c.text
    except ParseError as first:
        retry: list[Message] = [
            *messages,
            {"role": "assistant", "content": _shown(c.text)},
            {"role": "user", "content": f"Your reply could not be read ({first}). {reminder}"},
        ]
        c2 = await llm.complete(retry, **opts)
        try:
            return read_reply(c2.text, parser, schema), c2.text
        except ParseError as second:
            raise LLMOutputError(
                f"stage '{stage}': unreadable reply after one re-ask: {second}",
                stage=stage,
                raw=c2.text,
            ) from None


def _shown(text: str) -> str:
    """The failed reply as it goes back to the model: without its reasoning (R1-style models
    are not to be shown their own thinking), or as sent if it was nothing else."""
    try:
        return strip_thinking(text) or text
    except ParseError:
        return text
