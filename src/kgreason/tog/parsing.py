"""Readers of ToG's replies: scores (relations, entities), the sufficiency verdict, answers.

A reader raises ParseError on a reply it cannot read, so `ask_parsed` re-asks once; what a
stage does after that is the stage's choice (ToG's own recoveries, named in the result).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kgreason.kg.ranking import normalize_name
from kgreason.llm.parse import (
    MAX_JSON_REPLY_CHARS,
    ParseError,
    extract_json,
    parse_braced_answers,
)

#: the tag of ToG's released reply form, `{name (Score: 0.4)}`, which models trained on it
#: keep producing; the name is the text before it within its `{...}`, `;` or line segment
#: possessive quantifiers, and the number as `d+(.d+)?|.d+` (the same numbers as
#: `[0-9]*\.?[0-9]+`): a run of digits not followed by ")" was split two ways at every
#: digit (quadratic), and spaces, digits, dots and ")" never need to be given back
_SCORE_TAG = re.compile(r"\(\s*+score\s*+:\s*+([0-9]++(?:\.[0-9]++)?+|\.[0-9]++)\s*+\)", re.I)
_VERDICT = re.compile(r"\{\s*+\**+\s*+(yes|no)\s*+\**+\s*+\}", re.I)
_BRACED = re.compile(r"\{([^{}]+)\}")
_SEGMENT_BREAK = re.compile(r"[{};\n]")
_NUMBERING = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+")
_NUMBER = re.compile(r"(?<![\w.])([01](?:\.\d+)?|\.\d+)(?![\w.])")


def _score(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return min(1.0, max(0.0, float(value)))
    if isinstance(value, str):
        try:
            return min(1.0, max(0.0, float(value.strip())))
        except ValueError:
            return None
    return None


def _bounded(text: str) -> str:
    """Replies past the JSON search bound are refused before any regex reads them."""
    if len(text) > MAX_JSON_REPLY_CHARS:
        raise ParseError(
            f"reply of {len(text):,} characters is too long to read "
            f"(limit {MAX_JSON_REPLY_CHARS:,})"
        )
    return text


def _tog_form_pairs(text: str) -> list[tuple[str, object]]:
    """`{name (Score: x)}` pairs, in one linear pass over the segments of the reply."""
    out: list[tuple[str, object]] = []
    for segment in _SEGMENT_BREAK.split(text):
        m = _SCORE_TAG.search(segment)
        if m is not None:
            name = segment[: m.start()].strip()
            out.append((name, m.group(1)))
            bare = _NUMBERING.sub("", name)
            if bare != name:
                out.append((bare, m.group(1)))
    return out


def _pairs_from_json(text: str) -> list[tuple[str, object]]:
    try:
        data = extract_json(text)
    except ParseError:
        return []
    if isinstance(data, dict):
        return [(str(k), v) for k, v in data.items()]
    out: list[tuple[str, object]] = []
    if isinstance(data, list):
        for item in data:
            if isinstance(item, dict):
                name = next((item[k] for k in ("relation", "entity", "name") if k in item), None)
                if name is not None:
                    out.append((str(name), item.get("score")))
    return out


def parse_scores(text: str, allowed: Sequence[str]) -> dict[str, float]:
    """{item: score} for the items of `allowed` the reply scores. Accepted forms: a JSON
    object {item: score}, a JSON list of {"relation"|"entity"|"name", "score"}, ToG's
    `{item (Score: 0.4)}` lines, and, when there is one number per item, bare numbers in
    the order the items were listed (ToG's entity-score form). Names are matched exactly,
    then up to case/spacing/punctuation; names not in `allowed` are ignored."""
    _bounded(text)
    by_norm: dict[str, str] = {}
    for a in allowed:
        by_norm.setdefault(normalize_name(a), a)
    listed = set(allowed)  # one lookup per pair, not a scan of the list
    pairs = _pairs_from_json(text) or _tog_form_pairs(text)
    out: dict[str, float] = {}
    for name, value in pairs:
        key = name.strip().strip("\"'")
        item = key if key in listed else by_norm.get(normalize_name(key))
        score = _score(value)
        if item is not None and score is not None and item not in out:
            out[item] = score
    if out:
        return out
    numbers = [float(n) for n in _NUMBER.findall(text)]
    if len(allowed) > 1 and len(numbers) == len(allowed):
        return dict(zip(allowed, numbers, strict=True))
    raise ParseError(
        'no score for any listed item; reply with a JSON object {"item": score} using the '
        "names exactly as listed"
    )


def parse_sufficient(text: str) -> bool:
    """`{Yes}` / `{No}` at the head of the reply (the first one wins); a bare leading Yes/No
    word is accepted as well, as small models often drop the braces."""
    _bounded(text)
    m = _VERDICT.search(text)
    if m:
        return m.group(1).lower() == "yes"
    m = re.match(r"\W*(yes|no)\b", text.strip(), re.I)
    if m:
        return m.group(1).lower() == "yes"
    raise ParseError("reply starts with neither {Yes} nor {No}")


def parse_answer(text: str) -> list[str]:
    """`answer: {A, B}`; otherwise the last `{...}` that is not a Yes/No verdict."""
    _bounded(text)
    try:
        return parse_braced_answers(text)
    except ParseError:
        pass
    found = [
        g.strip()
        for g in _BRACED.findall(text)
        if g.strip() and g.strip().lower() not in ("yes", "no")
    ]
    if not found:
        raise ParseError("no answer in braces: end with a line 'answer: {ANSWER}'")
    return [p.strip() for p in found[-1].split(",") if p.strip()]
