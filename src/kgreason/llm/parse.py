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

from kgreason.llm.base import CallOptions, ChatLLM, LLMOutputError, Message
from kgreason.llm.jsonscan import balanced_spans, scan, trim_truncated
from kgreason.llm.repair import RepairMeter, RepairTooCostly, repair_loads
from kgreason.llm.schema import SchemaMismatch, StageSchema

T = TypeVar("T")

_FENCE = re.compile(r"```(?:json|JSON|jsonc|json5)?[ \t]*\n?(.*?)```", re.S)
_QUOTE = re.compile("[\"'\u201c\u201d\u2018\u2019]")
_LITERAL = re.compile(r"\b(?:true|false|null|True|False|None)\b")

#: Bounds on the JSON search, so a hostile reply cannot make it quadratic: replies longer
#: than this are not searched, and only the first `_MAX_STARTS` brackets open a candidate.
MAX_JSON_REPLY_CHARS = 100_000
_MAX_STARTS = 64
#: at most this many candidates go through the (slower, lenient) repair pass, none nested
#: deeper than `_MAX_DEPTH` (no model reply nests that deep; a hostile one might), and all
#: within one budget of characters read (llm/repair.py: json-repair itself is quadratic
#: on some texts)
_MAX_REPAIRS = 8
_MAX_DEPTH = 64


class ParseError(ValueError):
    """Raised by a parser when the text does not have the expected form."""


def _repairable(cand: str) -> bool:
    """Repair only what looks like JSON: quoted strings, or numbers and literals only.
    `{Yes}` or `{E7: Moonlight Sonata}` in prose are not JSON with defects."""
    if _QUOTE.search(cand):
        return True
    return not re.search(r"[A-Za-z]", _LITERAL.sub("", cand))


def _repair(cand: str, meter: RepairMeter) -> Any:
    """json-repair's reading of `cand` if it is a non-empty object or array, else None
    (also once the reply's repairs have spent their budget: `meter.left` < 0)."""
    if meter.left <= 0 or scan(cand)[1] > _MAX_DEPTH or not _repairable(cand):
        return None
    try:
        value = repair_loads(cand, meter)
    except (RepairTooCostly, ValueError, RecursionError, IndexError, TypeError):
        return None
    # Repairs are for structures only: a bare reply "None" or "True" is prose, not JSON,
    # and reading it as null would look like "no answer"; an empty repair read nothing.
    return value if isinstance(value, dict | list) and value else None


def _loads(cand: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(cand.strip())
    except (ValueError, RecursionError):
        return False, None


def extract_json(text: str) -> Any:
    """The JSON value in an LLM reply: fenced block, bare value, or value with text around
    it. Defects models make (single or smart quotes, trailing commas, comments, Python
    literals, unquoted keys) are repaired with the `json-repair` library; a value cut at
    the token limit is closed after its last complete item. Nesting too deep, a reply too
    long to search, or repairs that read past their budget, is a ParseError like any other."""
    if len(text) > MAX_JSON_REPLY_CHARS:
        raise ParseError(
            f"reply of {len(text):,} characters is too long to search for JSON "
            f"(limit {MAX_JSON_REPLY_CHARS:,})"
        )
    fences = [m.group(1) for m in _FENCE.finditer(text)]
    open_at, deepest, _ = scan(text)
    top, inner = balanced_spans(text if open_at is None else text[:open_at], _MAX_STARTS)
    whole = [text] if open_at is None else []
    for cand in [*fences, *whole]:
        ok, value = _loads(cand)
        if ok:
            return value
    meter = RepairMeter(len(text))
    if open_at is not None and deepest <= _MAX_DEPTH:  # cut at the token limit
        value = _repair(trim_truncated(text[open_at:]), meter)
        if value is not None:
            return value
    repairs = 0
    for cand in [*fences, *top, *whole]:
        ok, value = _loads(cand)
        if ok:
            return value
        if repairs < _MAX_REPAIRS:
            repairs += 1
            value = _repair(cand.strip(), meter)
            if value is not None:
                return value
    for cand in inner:
        ok, value = _loads(cand)
        if ok:
            return value
    spent = " (repairs stopped: the reply is too costly to repair)" if meter.left < 0 else ""
    raise ParseError(f"no JSON value found in the reply{spent}")


#: an opening or closing reasoning tag; tags cannot overlap (each holds one "<"), so one
#: finditer lists them all
_THINK_TAG = re.compile(r"<(/?)(think|thinking|reasoning)>", re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.I)
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_EMPHASIS = re.compile(r"\*\*|__|(?<!`)`(?!`)")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.M)
_FENCE_LINE = re.compile(r"^[ \t]*```[\w-]*[ \t]*$\n?", re.M)


def _tag_key(name: str) -> str:
    """What a closing tag must spell for `<(think|...)>...</\\1>` (re.I) to pair it with an
    opening one: the same letters up to the regex engine's simple lower case, which is
    `str.lower` except that U+0130 lowers to a plain "i"."""
    return name.replace("\u0130", "i").lower()


def _drop_blocks(text: str) -> str:
    """`re.sub(r"<(think|thinking|reasoning)>.*?</\\1>", "", text, flags=re.S | re.I)` in
    one pass: each opening tag pairs with the first matching closing tag after it, found
    by a pointer per tag that only moves forward (the lazy regex rescanned the rest of the
    text from every `<think>` that had none: quadratic on "<think>" repeated)."""
    tags = list(_THINK_TAG.finditer(text))
    closes: dict[str, list[int]] = {}
    for m in tags:
        if m.group(1):
            closes.setdefault(_tag_key(m.group(2)), []).append(m.start())
    ends = {m.start(): m.end() for m in tags if m.group(1)}
    seen: dict[str, int] = {}
    pieces: list[str] = []
    pos = 0
    for m in tags:
        if m.group(1) or m.start() < pos:
            continue
        key = _tag_key(m.group(2))
        starts, j = closes.get(key, []), seen.get(key, 0)
        while j < len(starts) and starts[j] < m.end():
            j += 1
        seen[key] = j
        if j < len(starts):
            pieces.append(text[pos : m.start()])
            pos = ends[starts[j]]
    pieces.append(text[pos:])
    return "".join(pieces)


def drop_thinking(text: str) -> str:
    """`text` without its reasoning (see `strip_thinking`); "" if it was only reasoning."""
    out = _drop_blocks(text)
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


#: `answer: {A}, {B} and {C}`. Possessive quantifiers: each part (spaces, colon, comma,
#: "and", a brace's inside) is a different class of character from the next, so giving
#: characters back never helps; without them "answer" followed by a long run of spaces
#: was retried at every split of the run (quadratic)
_BRACED_ANSWER = re.compile(r"answer\s*+:?+\s*+((?:\{[^{}]*+\}\s*+,?+\s*+(?:and\s*+)?+)++)", re.I)
_BRACES = re.compile(r"\{([^{}]*)\}")


def parse_braced_answers(text: str) -> list[str]:
    """PoG's answer form `answer: {A}` (possibly `{A, B}` or several braces after `answer:`);
    Markdown emphasis around it (`**Answer:** {A}`) is ignored."""
    text = plain_markdown(text)
    m = _BRACED_ANSWER.search(text)
    if not m:
        raise ParseError("reply has no 'answer: {...}'")
    items: list[str] = []
    seen: set[str] = set()
    for group in _BRACES.findall(m.group(1)):
        for part in split_items(group):
            if part.lower() not in {"yes", "no"} and part not in seen:
                seen.add(part)
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
