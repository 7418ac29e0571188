"""The reply readers rewritten against super-linear request and reply text
(tests/security/test_server_parsers_llm.py holds the attacks) return what the old regexes
and loops returned: each old form is kept here as the oracle, and hypothesis compares the
two on generated text (the name and span lookups: test_server_parsers_names.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import json_repair
from hypothesis import given, settings
from hypothesis import strategies as st

from kgreason.lkg import answering as lkg_answering
from kgreason.llm import jsonscan
from kgreason.llm.parse import (
    ParseError,
    drop_thinking,
    parse_braced_answers,
    plain_markdown,
    split_items,
)
from kgreason.llm.repair import RepairMeter, repair_loads
from kgreason.pog.analysis import _SEP, checked_order
from kgreason.pog.precise import parse_top_list
from kgreason.pog.supplement import Prediction, parse_predictions
from kgreason.pog.topic import parse_keywords
from kgreason.pog.types import TopicEntity
from kgreason.tog import parsing as tog_parsing


def _old_scan(text: str) -> tuple[int | None, int, int | None]:
    stack: list[int] = []
    deepest, str_start, esc = 0, None, False
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


def _old_spans(text: str, max_starts: int) -> tuple[list[str], list[str]]:
    top: list[str] = []
    inner: list[str] = []
    covered = -1
    for start in [i for i, ch in enumerate(text) if ch in "{["][:max_starts]:
        ch, depth, in_str, esc = text[start], 0, False, False
        close = "}" if ch == "{" else "]"
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
    return sorted(top, key=len, reverse=True), sorted(inner, key=len, reverse=True)


def _old_trim(tail: str) -> str:
    str_start = _old_scan(tail)[2]
    tail = tail[:str_start] if str_start is not None else re.sub(r"[\w.+-]+\s*$", "", tail)
    for _ in range(3):
        tail = tail.rstrip()
        if tail.endswith(":"):
            tail = re.sub(r"\"[^\"]*\"\s*:$", "", tail)
        tail = tail.rstrip().rstrip(",")
    return tail


def _texts(*parts: str, size: int = 30) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(parts), max_size=size).map("".join)


def _outcome(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except ParseError:
        return ParseError


JSONISH = _texts(*'{}[]"\\', "a", " ", ":", ",", "\n", "'", "1", "true", "//", "```", size=40)


@settings(max_examples=1000, deadline=None)
@given(JSONISH, st.integers(1, 64))
def test_json_scanners_match_the_old_loops(text, max_starts):
    assert jsonscan.scan(text) == _old_scan(text)
    assert jsonscan.balanced_spans(text, max_starts) == _old_spans(text, max_starts)
    assert jsonscan.trim_truncated(text) == _old_trim(text)


@settings(max_examples=1000, deadline=None)
@given(JSONISH)
def test_metered_repair_matches_json_repair(text):
    try:
        expected: Any = json_repair.loads(text)
    except Exception as e:  # whatever it raises, the metered one must too
        expected = type(e)
    try:
        got: Any = repair_loads(text, RepairMeter(10**6))
    except Exception as e:
        got = type(e)
    assert got == expected and type(got) is type(expected)


_TAGS = ["<think>", "</think>", "<THINK>", "</Think>", "<thinking>", "</thinking>"]
_TAGS += ["<reasoning>", "</reasoning>", "<th\u0130nk>", "</th\u0130nk>", "<th\u0131nk>"]
_TAGS += [
    "</th\u0131nk>",
    "</thin\u212ak>",
    "<rea\u017foning>",
    "</rea\u017foning>",
    "x",
    "\n",
    "<",
]
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", re.I)


def _old_drop_thinking(text: str) -> str:
    out = re.sub(r"<(think|thinking|reasoning)>.*?</\1>", "", text, flags=re.S | re.I)
    closes = list(_THINK_CLOSE.finditer(out))
    if closes:
        out = out[closes[-1].end() :]
    opened = _THINK_OPEN.search(out)
    return (out[: opened.start()] if opened else out).strip()


@settings(max_examples=1000, deadline=None)
@given(_texts(*_TAGS))
def test_reasoning_is_dropped_as_the_old_regex_dropped_it(text):
    """Including the case-insensitive back-reference's pairs (U+0130 is an "i" to it)."""
    assert drop_thinking(text) == _old_drop_thinking(text)


def _old_clean(text: str) -> str:
    s, prev = text, None
    while s != prev:
        prev = s
        s = s.strip().strip("*_`").strip("\"'“”‘’").rstrip(".")
    return s


_LKG = ["answer", "Answer", ":", "：", " ", "\n", "x", "*", ".", "-", "<think>", "</think>", '"']


@settings(max_examples=1000, deadline=None)
@given(_texts(*_LKG, "_", "“", "\t"))
def test_lkg_answer_readers_match_the_old_regexes(text):
    old_answer = re.compile(r"^\W*answer\W*[:：]\s*(.*)$", re.I | re.M)
    assert lkg_answering._drop_think(text) == re.sub(
        r"<think>.*?</think>", "", text, flags=re.S | re.I
    )
    assert lkg_answering._answer_lines(text) == old_answer.findall(text)
    assert lkg_answering._clean(text) == _old_clean(text)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=" \t\n\u00a0-\u2013\u2014><ab", max_size=40))
def test_indicator_separator_splits_as_before(text):
    assert _SEP.split(text) == re.split(r"\s+[-\u2013\u2014]+>?\s+|\s*->\s*|\s*<-\s*", text)


def _old_top_list(text: str, n: int, width: int) -> list[int]:
    m = re.search(r"top[ _-]?list[\"']?\s*:?\s*[\{\[(](.*?)[\}\])]", text, re.I | re.S)
    if not m:
        raise ParseError("no list")
    chosen: list[int] = []
    for num in re.findall(r"(?:path\s*)?(\d+)", m.group(1), re.I):
        if 0 <= int(num) - 1 < n and int(num) - 1 not in chosen:
            chosen.append(int(num) - 1)
    if not chosen:
        raise ParseError("empty")
    return chosen[:width]


def _old_keywords(text: str) -> list[str]:
    m = re.search(r"topic[ _-]?entit(?:y|ies)\s*:?\s*\{([^{}]*)\}", text, re.I)
    if not m:
        raise ParseError("none")
    out: list[str] = []
    for part in split_items(m.group(1)):
        if part not in out:
            out.append(part)
    if not out:
        raise ParseError("empty")
    return out


def _old_braced(text: str) -> list[str]:
    text = plain_markdown(text)
    m = re.search(r"answer\s*:?\s*((?:\{[^{}]*\}\s*,?\s*(?:and\s*)?)+)", text, re.I)
    if not m:
        raise ParseError("none")
    items: list[str] = []
    for group in re.findall(r"\{([^{}]*)\}", m.group(1)):
        for part in split_items(group):
            if part.lower() not in {"yes", "no"} and part not in items:
                items.append(part)
    if not items:
        raise ParseError("empty")
    return items


_LISTS = ["top", "list", "_", " ", "\n", ":", "'", "{", "[", "(", "}", "]", ")", "Path", "1", "0"]
_LISTS += ["topic", "entity", "entities", "answer", "a", "b", ",", '"', "and", "yes", "**", "#"]


@settings(max_examples=1000, deadline=None)
@given(_texts(*_LISTS), st.integers(0, 12))
def test_list_readers_match_the_old_regexes(text, n):
    assert _outcome(parse_top_list, text, n, 3) == _outcome(_old_top_list, text, n, 3)
    assert _outcome(parse_keywords, text) == _outcome(_old_keywords, text)
    assert _outcome(parse_braced_answers, text) == _outcome(_old_braced, text)


def _found(m: re.Match[str] | None) -> Any:
    return m and (m.span(), m.groups())


@settings(max_examples=1000, deadline=None)
@given(_texts("(", ")", "score", "Score", ":", " ", "1", "0", ".", "5", "{", "}", "*", "yes", "no"))
def test_tog_regexes_match_the_old_ones(text):
    old_score = re.compile(r"\(\s*score\s*:\s*([0-9]*\.?[0-9]+)\s*\)", re.I)
    old_verdict = re.compile(r"\{\s*\**\s*(yes|no)\s*\**\s*\}", re.I)
    assert _found(tog_parsing._SCORE_TAG.search(text)) == _found(old_score.search(text))
    assert _found(tog_parsing._VERDICT.search(text)) == _found(old_verdict.search(text))


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from("abcd")), st.lists(st.sampled_from("abce")))
def test_checked_order_matches_the_old_lists(order, ids):
    topics = [TopicEntity(i, i) for i in ids]
    old = [t for t in dict.fromkeys(order) if t in ids]
    old += [t for t in dict.fromkeys(ids) if t not in old]
    assert checked_order(order, topics) == old


_PRED = st.fixed_dictionaries(
    {
        "predicted": st.sampled_from(["a", " a", "b", "", 1]),
        "indicator": st.sampled_from(["x", " "]),
    }
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_PRED, max_size=8))
def test_predictions_are_deduplicated_as_before(items):
    old: list[tuple[str, str]] = []
    for item in items:
        name, ind = item["predicted"], item["indicator"]
        fresh = isinstance(name, str) and all(p != name.strip() for p, _ in old)
        if fresh and name.strip() and ind.strip():
            old.append((name.strip(), ind.strip()))
    got = _outcome(parse_predictions, json.dumps(items))
    assert got == (ParseError if not old else [Prediction(n, i) for n, i in old[:3]])
