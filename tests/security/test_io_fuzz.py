"""Property-based fuzzing of what reads untrusted text: the TSV / MetaQA / N-Triples / Turtle
loaders (files from anywhere) and the LLM-reply parsers (text from a model). Any input gives
a value or the module's typed error, never another exception."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kgreason.kg.base import KGError
from kgreason.kg.loaders import Source
from kgreason.llm.parse import ParseError, extract_json, parse_braced_answers, parse_yes_no

FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)  # no timing: the machine is shared

#: fragments that steer generated text towards the parsers' interesting paths
JSONISH = st.sampled_from(
    ["{", "}", "[", "]", '"', ",", ":", "```json\n", "```", "answer:", "{Yes}", "{No}", "None",
     "True", "'", "\u201c", "\\", "\x00", "1e999", "-", "NaN", " ", "\n", "and"]
)  # fmt: skip
REPLY = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(JSONISH, st.text(max_size=5)), max_size=60).map("".join),
)
DEEP = ["[" * 5000, "{" * 5000, '{"a":' * 5000 + "1" + "}" * 5000, "[" * 5000 + "]" * 5000]


@FUZZ
@given(REPLY)
@example(DEEP[0])
@example(DEEP[1])
@example(DEEP[2])
@example(DEEP[3])
@example("```json\n" + "[" * 3000 + "]" * 3000 + "\n```")
def test_extract_json_gives_a_value_or_parse_error(text):
    with contextlib.suppress(ParseError):
        extract_json(text)


@FUZZ
@given(REPLY)
def test_yes_no_gives_a_bool_or_parse_error(text):
    with contextlib.suppress(ParseError):
        assert isinstance(parse_yes_no(text), bool)


@FUZZ
@given(REPLY)
@example("answer: {" + "{" * 5000)
def test_braced_answers_give_strings_or_parse_error(text):
    try:
        got = parse_braced_answers(text)
        assert got and all(isinstance(a, str) and a for a in got)
    except ParseError:
        pass


LINE_PIECES = st.sampled_from(
    ["\t", "|", "\n", "\r\n", " ", "<http://x/a>", "_:b", '"lit"@en', "^^", ".", "@prefix",
     "x:", ";", ",", "#", "\x00", "\ufeff", "\xff", "a", "r", "b"]
)  # fmt: skip
FILE_BYTES = st.one_of(
    st.binary(max_size=400),
    st.lists(st.one_of(LINE_PIECES, st.text(max_size=4)), max_size=80).map(
        lambda xs: "".join(xs).encode("utf-8", "surrogatepass")
    ),
)


def _load(data: bytes, fmt: str, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"kb{suffix}"
        p.write_bytes(data)
        try:
            src = Source(p, fmt)
            for h, r, t in src:
                assert isinstance(h, str) and isinstance(r, str) and isinstance(t, str)
        except KGError:
            pass


@FUZZ
@given(FILE_BYTES)
@example(b"\xff\xfe\x00a\tb\tc\n")
@example(b"a\tb\tc")
def test_tsv_loader(data):
    _load(data, "tsv", ".tsv")


@FUZZ
@given(FILE_BYTES)
def test_metaqa_loader(data):
    _load(data, "metaqa", ".txt")


@FUZZ
@given(FILE_BYTES)
@example(b"<http://x/a> <http://x/b> <http://x/c> .\n<http://x/a> <http://x/b> \xff .\n")
@example(b'<http://x/a> <http://x/b> "x"^^<http://x/unknown> .\n')
def test_ntriples_loader(data):
    _load(data, "nt", ".nt")


@FUZZ
@given(FILE_BYTES)
@example(b"@prefix x: <http://x/> .\nx:a x:b (" + b"(" * 3000 + b")" * 3000 + b") .\n")
def test_turtle_loader(data):
    _load(data, "ttl", ".ttl")


def test_json_search_is_bounded_on_hostile_replies():
    """Regressions found by the fuzzer: deep nesting raised RecursionError, and the span
    search was quadratic in the reply length."""
    import pytest

    from kgreason.llm.parse import MAX_JSON_REPLY_CHARS

    with pytest.raises(ParseError, match="too long to search"):
        extract_json("[" * (MAX_JSON_REPLY_CHARS + 1))
    with pytest.raises(ParseError):
        extract_json("[" * 50_000)
    assert extract_json('x [1, {"a": [2]}] y') == [1, {"a": [2]}]
