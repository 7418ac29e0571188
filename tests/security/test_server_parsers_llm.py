"""Attack: an LLM reply (a remote OpenAI-compatible endpoint may send anything up to
`llm.max_reply_bytes`, 16 MiB), a question, or a SPARQL endpoint's reply, shaped so that a
host-side reader goes super-linear. `kgreason serve` and `kgreason mcp` parse replies on
the event loop (and `re` holds the GIL on a worker thread too), so one such reply froze
the server. Every reader of LLM replies and request text outside the solver layer is timed
at 10k / 50k / 200k characters on adversarial inputs; only the ratio of cost per character
counts (`linear.py`). The differential tests in test_server_parsers_equivalence.py check
that each rewritten reader returns what the old regex or loop returned.

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
import contextlib
import itertools
import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from kgreason.kg.base import EntityMatch
from kgreason.kg.sparql.client import Reply, SparqlBadResponseError, SparqlClient
from kgreason.kg.sparql.search import _fragments, candidate_filter
from kgreason.lkg import answering as lkg_answering
from kgreason.lkg.codegen import extract_program
from kgreason.lkg.construction import chunk_text, extraction_to_graph
from kgreason.lkg.ids import lkg_name_key
from kgreason.lkg.retrieval import fallback_entities
from kgreason.lkg.types import Extraction
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
from kgreason.pog.analysis import checked_order, read_indicator
from kgreason.pog.answering import parse_summary, rejoin_names
from kgreason.pog.linking import link_spans
from kgreason.pog.precise import parse_top_list
from kgreason.pog.supplement import parse_predictions
from kgreason.pog.topic import bracketed_topics, parse_keywords
from kgreason.pog.types import TopicEntity
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


#: a reply json-repair reads quadratically. `["a"a"a...` was one up to json-repair 0.64.6;
#: 0.64.9 reads that one linearly, but `["a":"a":...` still quadratically (both versions)
COSTLY = '"a":'


def reads(text: str) -> int:
    """Characters json-repair reads repairing `text`, with no budget to stop it."""
    meter = RepairMeter(1)
    meter.left = 10**12
    with contextlib.suppress(Exception):
        repair_loads(text, meter)
    return 10**12 - meter.left


def test_a_costly_repair_stops_at_its_budget():
    """The metered repair stops a quadratic repair (a ParseError naming the cost), and the
    meter is what stopped it, not the length."""
    # the attack is real in the json-repair installed: twice the text, four times the reads
    # (if a new version reads it linearly, this fails: find another quadratic input)
    assert reads("[" + COSTLY * 4000) > 3.5 * reads("[" + COSTLY * 2000)
    text = "[" + COSTLY * 10_000
    assert len(text) < 50_000  # far below the length cap: the budget, not the length, stops it
    with pytest.raises(ParseError, match="too costly to repair"):
        extract_json(text)
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
