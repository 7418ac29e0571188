"""Attack: an LLM reply (a remote OpenAI-compatible endpoint may send anything up to
`llm.max_reply_bytes`, 16 MiB), a question, or a SPARQL endpoint's reply, shaped so that a
host-side reader goes super-linear. `kgreason serve` and `kgreason mcp` parse replies on
the event loop (and `re` holds the GIL on a worker thread too), so one such reply froze
the server. Every reader of LLM replies and request text outside the solver layer is timed
at 10k / 50k / 200k characters on adversarial inputs; only the ratio of cost per character
counts (`linear.py`). The differential tests at the end check that each rewritten reader
returns what the old regex or loop returned.

Written before the defence. On the code before it these failed (growth of the cost per
character, linear ~1x, quadratic ~5x at 50k where the timing stopped; "timeout": the test
ran past 10 minutes): extract_json on `["a"a"a...` (json-repair itself; timeout) and on a
long bare token cut at the end (5.2x); reasoning tags: an unclosed `<think>` repeated
(4.7x), `<thinking></think>` (5.0x), `<reasoning>x` (5.3x), also through read_reply (4.8x)
and extract_program (5.0x); the braced answer with many items (4.2x) or "answer" and a long
run of spaces (5.6x); the LKG answer on many blank lines (timeout), unclosed `<think>`
(5.9x) and `*.` repeated (4.8x); LKG construction naming many new entities (7.4x); the
indicator split on a long run of spaces (4.9x) or newlines (4.2x); `top_list: [` repeated
(5.3x) and "top_list" with a long run of spaces (timeout); topic keywords with a long run
of spaces (4.4x) or many items (4.7x); rejoin_names on many items (cubic; timeout); ToG's
`(score: 111...` (4.5x) and `{` with a long run of spaces (5.5x); and on request text the
LKG fallback n-grams (4.7x), the PoG span linker (4.6x), the SPARQL candidate filter (4.6x)
and checked_order (6.0x). Deeply nested JSON from the LLM or SPARQL endpoint raised
RecursionError, a malformed SPARQL binding AttributeError, and a path number of more than
4,300 digits ValueError from int().
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import httpx
import json_repair
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgreason.kg.base import EntityMatch
from kgreason.kg.ranking import normalize_name
from kgreason.kg.sparql.client import Reply, SparqlBadResponseError, SparqlClient
from kgreason.kg.sparql.search import _fragments, candidate_filter
from kgreason.lkg import answering as lkg_answering
from kgreason.lkg.codegen import extract_program
from kgreason.lkg.construction import _Linker, chunk_text, extraction_to_graph
from kgreason.lkg.ids import lkg_name_key
from kgreason.lkg.retrieval import _STOP, fallback_entities
from kgreason.lkg.types import Extraction, LKGraph, Node
from kgreason.llm import jsonscan
from kgreason.llm.base import LLMBadReply
from kgreason.llm.openai_adapter import OpenAIChat
from kgreason.llm.parse import (
    ParseError,
    drop_thinking,
    extract_json,
    parse_braced_answers,
    parse_yes_no,
    plain_markdown,
    read_reply,
    split_items,
)
from kgreason.llm.repair import MAX_READS, RepairMeter, repair_loads
from kgreason.llm.tokens import TokenCounter
from kgreason.pog.analysis import _SEP, checked_order, read_indicator
from kgreason.pog.answering import MAX_NAME_PARTS, parse_summary, rejoin_names
from kgreason.pog.linking import _exact_ends, _holds_exact, _Span, link_spans
from kgreason.pog.precise import parse_top_list
from kgreason.pog.supplement import Prediction, parse_predictions
from kgreason.pog.topic import bracketed_topics, parse_keywords
from kgreason.pog.types import TopicEntity
from kgreason.tog import parsing as tog_parsing
from kgreason.tog.parsing import parse_answer as tog_answer
from kgreason.tog.parsing import parse_scores, parse_sufficient
from tests.security.linear import assert_linear, repeat_to

LETTERS = "abcdefghijklmnopqr"  # no "s": lkg_name_key would singularise


def _word(i: int) -> str:
    """The i-th of 18^4 distinct four-letter words."""
    return "".join(LETTERS[i // 18**k % 18] for k in range(4))


def _words(n: int, width: int = 5, prefix: str = "") -> str:
    return " ".join(prefix + _word(i) for i in range(n // width))


def _items(open_: str, close: str = "}") -> Callable[[int], str]:
    """`open_` and many distinct comma-separated items."""
    return lambda n: open_ + ", ".join(_word(i) for i in range(n // 6)) + close


def _relations(n: int) -> str:
    """An extraction whose every relation names two new entities."""
    rels = [{"source": _word(i), "relation": "r", "target": _word(i) + "x"} for i in range(n // 60)]
    return json.dumps({"relationships": rels})


class _Index:
    """The two fields of an LKGIndex that fallback_entities reads."""

    def __init__(self, k: int) -> None:
        self.names = {lkg_name_key(_word(i)): [f"n{i}"] for i in range(k)}
        self.nodes = {f"n{i}": SimpleNamespace(name=_word(i)) for i in range(k)}


class _KG:
    """Every word is an entity, every two-word span a fuzzy match of the first's."""

    async def search(self, text: str, *, limit: int = 10, fuzzy: bool = True, **_: Any):
        if " " not in text:
            return [EntityMatch(f"Q{text}", text, "exact")]
        return [EntityMatch(f"Q{text.split()[0]}", text, "fuzzy", 0.99)] if fuzzy else []


INDEX = _Index(18**4)
KNOWN = {"Washington, D.C."}
TRIGRAMS = ["".join(p) for p in itertools.product("abcdefghijklmnopqrstuvwxyz0123456789", repeat=3)]

LLM_REPLIES = [
    ("extract_json/stray-quotes", extract_json, repeat_to('"a', "[")),
    ("extract_json/parens", extract_json, repeat_to("( ")),
    ("extract_json/cut-token", extract_json, repeat_to("a", "[", " b")),
    ("extract_json/many-starts", extract_json, repeat_to("a", "[" * 64, "]" * 64)),
    ("extract_json/fences", extract_json, repeat_to("```")),
    ("extract_json/open-fences", extract_json, repeat_to("```json\n{")),
    ("extract_json/open-braces", extract_json, repeat_to("{")),
    ("extract_json/quotes", extract_json, repeat_to('"')),
    ("extract_json/keys", extract_json, repeat_to('{"a": ')),
    ("extract_json/duplicate-keys", extract_json, repeat_to('"a": 1, ', "{", ",")),
    ("extract_json/single-quotes", extract_json, repeat_to("{'a': 'b', ")),
    ("extract_json/spaces", extract_json, repeat_to(" ", "{", "x")),
    ("drop_thinking/open-tags", drop_thinking, repeat_to("<think>")),
    ("drop_thinking/other-close", drop_thinking, repeat_to("<thinking></think>")),
    ("drop_thinking/close-tags", drop_thinking, repeat_to("</think>")),
    ("drop_thinking/reasoning", drop_thinking, repeat_to("<reasoning>x")),
    ("plain_markdown/newlines", plain_markdown, repeat_to("\n", "x", "x")),
    ("plain_markdown/blanks", plain_markdown, repeat_to(" \t", "x", "x")),
    ("plain_markdown/fence-lines", plain_markdown, repeat_to("```\n")),
    ("plain_markdown/headings", plain_markdown, repeat_to("# ")),
    ("parse_yes_no/brace-spaces", parse_yes_no, repeat_to(" ", "{", "x")),
    ("parse_yes_no/newlines", parse_yes_no, repeat_to("\n", "x", "x")),
    ("split_items/quotes", split_items, repeat_to('"')),
    ("split_items/escapes", split_items, repeat_to('"\\')),
    ("braced/answer-spaces", parse_braced_answers, repeat_to(" ", "answer", "x")),
    ("braced/answers", parse_braced_answers, repeat_to("answer: ")),
    ("braced/open-brace", parse_braced_answers, repeat_to("answer: {")),
    ("braced/many-items", parse_braced_answers, _items("answer: {")),
    ("braced/brace-list", parse_braced_answers, repeat_to("{a}, ", "answer: ")),
    ("read_reply/think", lambda t: read_reply(t, parse_braced_answers), repeat_to("<think>")),
    ("count_tokens/one-word", TokenCounter().count_text, repeat_to("a")),
    ("extract_program/open-think", extract_program, repeat_to("<think>")),
    ("extract_program/fences", extract_program, repeat_to("```")),
    ("lkg_answer/blank-lines", lkg_answering.parse_answer, repeat_to("\n", "x", "x")),
    ("lkg_answer/open-think", lkg_answering.parse_answer, repeat_to("<think>")),
    ("lkg_answer/emphasis-dots", lkg_answering.parse_answer, repeat_to("*.", "Answer: ")),
    ("lkg_answer/answers", lkg_answering.parse_answer, repeat_to("Answer:\n")),
    (
        "extraction/many-names",
        lambda t: extraction_to_graph(Extraction.model_validate(json.loads(t)), ""),
        lambda n: _relations(n),
    ),
    ("read_indicator/spaces", lambda t: read_indicator(t, ["a"]), repeat_to(" ", "a", "b")),
    ("read_indicator/newlines", lambda t: read_indicator(t, ["a"]), repeat_to("\n", "a", "b")),
    ("read_indicator/chain", lambda t: read_indicator(t, ["a"]), repeat_to("x - ", "", "answer")),
    ("parse_summary/no-colon", parse_summary, repeat_to("summary ")),
    ("top_list/open", lambda t: parse_top_list(t, 5, 3), repeat_to("top_list: [")),
    ("top_list/spaces", lambda t: parse_top_list(t, 5, 3), repeat_to(" ", "top_list", "x")),
    ("top_list/paths", lambda t: parse_top_list(t, 5, 3), repeat_to("path ", "top_list: [")),
    ("top_list/long-number", lambda t: parse_top_list(t, 5, 3), repeat_to("1", "top_list: [", "]")),
    ("keywords/spaces", parse_keywords, repeat_to(" ", "topic entities", "x")),
    ("keywords/many-items", parse_keywords, _items("topic_entities: {")),
    (
        "rejoin_names/many-items",
        lambda t: rejoin_names(t.split(","), KNOWN.__contains__),
        repeat_to("a,"),
    ),
    (
        "supplement/many-predictions",
        parse_predictions,
        lambda n: json.dumps([{"predicted": _word(i), "indicator": "x"} for i in range(n // 40)]),
    ),
    ("tog_scores/digits", lambda t: parse_scores(t, ["a", "b"]), repeat_to("1", "(score: ", "x")),
    ("tog_scores/parens", lambda t: parse_scores(t, ["a", "b"]), repeat_to("( ")),
    ("tog_sufficient/brace-spaces", parse_sufficient, repeat_to(" ", "{", "x")),
    ("tog_answer/open-braces", tog_answer, repeat_to("{")),
]
REQUEST_TEXT = [
    ("chunk_text/sentences", lambda t: chunk_text(t, 100), repeat_to(". x")),
    ("fallback_entities/many-names", lambda t: fallback_entities(INDEX, t), _words),
    (
        "link_spans/many-names",
        lambda t: asyncio.run(link_spans(_KG(), t, max_ngram=2)),
        lambda n: _words(n, 6, "N"),
    ),
    ("bracketed_topics/open", bracketed_topics, repeat_to("[a")),
    (
        "checked_order/many-topics",
        lambda t: checked_order(t.split(), [TopicEntity(x, x) for x in reversed(t.split())]),
        _words,
    ),
    ("candidate_filter/trigrams", candidate_filter, lambda n: " ".join(TRIGRAMS[: n // 4])),
]


@pytest.mark.parametrize(
    ("fn", "make", "what"), [pytest.param(f, m, w, id=w) for w, f, m in LLM_REPLIES]
)
def test_llm_reply_readers_are_linear(fn, make, what):
    assert_linear(fn, make, what)


@pytest.mark.parametrize(
    ("fn", "make", "what"), [pytest.param(f, m, w, id=w) for w, f, m in REQUEST_TEXT]
)
def test_request_text_readers_are_linear(fn, make, what):
    assert_linear(fn, make, what)


def test_the_attacks_reach_the_readers():
    """The timings above measure real reading: the inputs are read, not refused early."""
    assert extract_json("[" + '"a' * 20) == ["a" + '"a' * 18]
    assert extract_json("[1, " + "2, " * 300 + "34") == [1] + [2] * 300
    assert parse_braced_answers("answer" + " " * 500 + "{x}") == ["x"]
    assert drop_thinking("<think>" * 50 + "a</think>b") == "b"
    assert lkg_answering.parse_answer("x" + "\n" * 500 + 'Answer: **"Paris."**.') == "Paris"
    assert read_indicator("a" + " " * 500 + "- r - answer(y)", ["a"]).depth == 1
    assert parse_top_list("top_list" + " " * 500 + ": [Path 2]", 5, 3) == [1]
    assert parse_keywords("topic entities" + " " * 500 + ": {x}") == ["x"]
    assert parse_scores("{a (score: " + "1" * 50 + ")}", ["a", "b"]) == {"a": 1.0}
    assert parse_sufficient("{" + " " * 500 + "yes}") is True
    assert len(rejoin_names(["Washington", "D.C."] * 3, KNOWN.__contains__)) == 3
    assert _fragments(" ".join(TRIGRAMS[:100])) == TRIGRAMS[:24]


def test_a_costly_repair_stops_at_its_budget():
    """json-repair reads `["a"a"a...` quadratically: the metered repair stops (a ParseError
    naming the cost), and the meter is what stopped it, not the length."""
    with pytest.raises(ParseError, match="too costly to repair"):
        extract_json("[" + '"a' * 20_000)
    meter = RepairMeter(10**6)
    assert meter.left == MAX_READS
    assert repair_loads('{"a": [1, 2,], "b": "c",}', RepairMeter(30)) == {"a": [1, 2], "b": "c"}


def test_a_path_number_too_long_for_int_is_out_of_range_not_a_crash():
    with pytest.raises(ParseError, match="names no path"):
        parse_top_list("top_list: {Path " + "1" * 5000 + "}", 5, 3)
    assert parse_top_list("top_list: {Path " + "0" * 5000 + "2}", 5, 3) == [1]


def test_deeply_nested_remote_json_is_a_bad_reply_not_a_recursion_error():
    chat = OpenAIChat("m", "http://llm.invalid/v1")
    with pytest.raises(LLMBadReply, match="not JSON"):
        chat._parse(b"[" * 200_000, [])
    client = SparqlClient("http://kg.invalid/sparql")
    headers = httpx.Headers({"content-type": "application/sparql-results+json"})
    with pytest.raises(SparqlBadResponseError, match="invalid JSON"):
        client._decode(Reply(200, headers, b"[" * 200_000))


@pytest.mark.parametrize("bindings", [[1], [{"s": 1}], [{"s": {"type": "uri", "value": 7}}]])
def test_malformed_sparql_bindings_are_a_bad_response(bindings):
    client = SparqlClient("http://kg.invalid/sparql")
    body = {"head": {"vars": ["s"]}, "results": {"bindings": bindings}}

    async def post(query: str) -> tuple[Reply, Any]:
        return Reply(200, httpx.Headers(), json.dumps(body).encode()), body

    client._post = post  # type: ignore[method-assign]
    with pytest.raises(SparqlBadResponseError, match=r"malformed results\.bindings"):
        asyncio.run(client.select("SELECT * WHERE {?s ?p ?o}"))


# --- the rewritten readers return what the old regexes and loops returned -----------------


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


def _old_rejoin(names: list[str], known: Callable[[str], bool]) -> list[str]:
    out, i = [], 0
    while i < len(names):
        for j in range(len(names), i + 1, -1):
            if known(", ".join(names[i:j])) and not all(known(x) for x in names[i:j]):
                out.append(", ".join(names[i:j]))
                i = j
                break
        else:
            out.append(names[i])
            i += 1
    return out


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=MAX_NAME_PARTS), st.data())
def test_rejoin_names_matches_the_old_loop_up_to_its_span(names, data):
    spans = [", ".join(names[i:j]) for i in range(len(names)) for j in range(i + 1, len(names) + 1)]
    known = set(data.draw(st.lists(st.sampled_from(spans), max_size=6))) if spans else set()
    assert rejoin_names(names, known.__contains__) == _old_rejoin(names, known.__contains__)


class _OldLinker(_Linker):
    def resolve(self, name: str) -> tuple[list[str], bool]:
        key = lkg_name_key(name)
        if key in self.by_name:
            return self.by_name[key], False
        squashed = key.replace(" ", "")
        hits = [i for k, ids in self.by_name.items() if k.replace(" ", "") == squashed for i in ids]
        return hits, bool(hits)


_NAMES = st.lists(
    st.sampled_from(["ab", "a b", "A B", "the ab", "abc", "a bc", "ab c"]), max_size=6
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _NAMES), max_size=12))
def test_linker_resolves_as_the_old_scan(ops):
    new, old = _Linker(LKGraph()), _OldLinker(LKGraph())
    for k, (add, names) in enumerate(ops):
        if add:
            node = Node(
                id=f"n{k % 4}", kind="entity", name=names[0] if names else "x", aliases=names[1:]
            )
            new.add(node)
            old.add(node)
        for name in names:
            assert new.resolve(name) == old.resolve(name)


def _old_fallback(index: Any, query: str, max_n: int = 4) -> list[str]:
    words = lkg_name_key(query).split()
    found: list[str] = []
    grams: list[str] = []
    for n in range(max_n, 0, -1):
        for i in range(len(words) - n + 1):
            gram = " ".join(words[i : i + n])
            ids = index.names.get(gram)
            if gram in _STOP or not ids or any(f" {gram} " in f" {g} " for g in grams):
                continue
            grams.append(gram)
            found.append(index.nodes[ids[0]].name)
    return found


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=12), st.sets(st.text("abcd ", max_size=8)))
def test_fallback_entities_match_the_old_scan(query, names):
    index = SimpleNamespace(names={}, nodes={})
    for k, name in enumerate(sorted(names)):
        index.names.setdefault(lkg_name_key(name), []).append(f"n{k}")
        index.nodes[f"n{k}"] = SimpleNamespace(name=name)
    text = " ".join(w * 3 for w in query)
    assert fallback_entities(index, text) == _old_fallback(index, text)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 8), st.integers(1, 3), st.sampled_from("ab"), st.booleans()))
)
def test_exact_span_lookup_matches_the_old_scan(raw):
    spans = [
        _Span(i, n, TopicEntity(e, e, method="exact" if x else "fuzzy"), False)
        for i, n, e, x in raw
    ]
    ends = _exact_ends(spans)
    for s in spans:
        old = any(
            e.link.method == "exact" and e.link.id == s.link.id and s.start <= e.start
            and e.start + e.n <= s.start + s.n
            for e in spans
        )  # fmt: skip
        assert _holds_exact(s, ends) == old


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


def _old_fragments(text: str) -> list[str]:
    frags: list[str] = []
    for tok in re.findall(r"[a-z0-9]+", normalize_name(text)):
        grams = [tok] if len(tok) <= 3 else [tok[i : i + 3] for i in range(len(tok) - 2)]
        frags.extend(g for g in grams if g not in frags)
    return frags[:24]


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="abcd 1_", max_size=200))
def test_candidate_filter_fragments_match_the_old_loop(text):
    assert _fragments(text) == _old_fragments(text)
