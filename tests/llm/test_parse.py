from __future__ import annotations

import pytest

from kgreason.llm import (
    LLMOutputError,
    ask_parsed,
    extract_json,
    parse_braced_answers,
    parse_yes_no,
)
from kgreason.llm.parse import ParseError
from kgreason.llm.testing import ScriptedLLM


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"relations": ["a", "b"]}', {"relations": ["a", "b"]}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ("Sure, here it is:\n```\n[1, 2]\n```\nHope this helps.", [1, 2]),
        ('```json\n{"a": 1}', {"a": 1}),  # fence cut off by max_tokens
        ('{"a": 1} I picked a because {reasons}.', {"a": 1}),  # trailing text with braces
        ('The result: [{"a": 1}, {"b": 2}] done', [{"a": 1}, {"b": 2}]),
        ('{"a": [1, 2,],}', {"a": [1, 2]}),  # trailing commas
        ("{'a': 'b', 'ok': True, 'none': None}", {"a": "b", "ok": True, "none": None}),
        ("{\u201ca\u201d: \u201cb\u201d}", {"a": "b"}),  # smart quotes
        ('{"a": "brace } inside a string"}', {"a": "brace } inside a string"}),
        ('{"k": "None of them"}', {"k": "None of them"}),  # literals in strings untouched
        ("42", 42),
        ("null", None),
    ],
)
def test_extract_json(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "garbage", "I choose relation 3.", "None", "True", "{unquoted: words}", "{", "{Yes}"],
)
def test_extract_json_garbage_raises(text):
    with pytest.raises(ParseError):
        extract_json(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{Yes}", True),
        ("{No}", False),
        ("{ yes } the path suffices", True),
        ("Based on the paths, {NO}.", False),
        ("{No}. Earlier I said {Yes} but", False),  # the first verdict wins
        ("Yes", True),  # a bare verdict opening the reply (small models drop the braces)
        ("no", False),
        ("**Yes.** The paths give the teacher.", True),
        ("No. The instrument is missing.", False),
    ],
)
def test_parse_yes_no(text, expected):
    assert parse_yes_no(text) is expected


@pytest.mark.parametrize(
    "text", ["{Maybe}", "", "yes}", "Yesterday", "No information is missing", "Yes, probably"]
)
def test_parse_yes_no_garbage_raises(text):
    with pytest.raises(ParseError):
        parse_yes_no(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("answer: {Jamaica}", ["Jamaica"]),
        ("answer: {A, B}", ["A", "B"]),
        ("{Yes}. Answer: {2014 World Series}\nreason: ...", ["2014 World Series"]),
        ("answer: {A} and {B}, {A}", ["A", "B"]),
        ("ANSWER:{'Denmark'}", ["Denmark"]),
        ("The answer is {Obama}. answer: {Barack Obama}", ["Barack Obama"]),
    ],
)
def test_parse_braced_answers(text, expected):
    assert parse_braced_answers(text) == expected


@pytest.mark.parametrize("text", ["Jamaica", "answer: Jamaica", "answer: {}", "answer: {Yes}", ""])
def test_parse_braced_answers_garbage_raises(text):
    with pytest.raises(ParseError):
        parse_braced_answers(text)


MSGS = [{"role": "user", "content": "Is the path sufficient?"}]


async def test_ask_parsed_first_reply_ok():
    llm = ScriptedLLM({"judge": ["{Yes}"]})
    value, raw = await ask_parsed(llm, MSGS, parse_yes_no, stage="judge", reminder="Use {Yes}.")
    assert value is True and raw == "{Yes}" and len(llm.calls) == 1


async def test_ask_parsed_reasks_once_with_reminder():
    llm = ScriptedLLM({"judge": ["I think so", "{No}"]})
    value, raw = await ask_parsed(
        llm, MSGS, parse_yes_no, stage="judge", reminder="Reply {Yes} or {No}.", sample=2
    )
    assert value is False and raw == "{No}"
    second = llm.calls[1]
    assert second.messages[:2] == [*MSGS, {"role": "assistant", "content": "I think so"}]
    assert "Reply {Yes} or {No}." in second.messages[2]["content"]
    assert second.stage == "judge" and second.sample == 2


async def test_ask_parsed_raises_after_second_failure():
    llm = ScriptedLLM({"judge": ["hmm", "still hmm", "never asked"]})
    with pytest.raises(LLMOutputError, match="judge") as e:
        await ask_parsed(llm, MSGS, parse_yes_no, stage="judge", reminder="Use braces.")
    assert e.value.stage == "judge" and e.value.raw == "still hmm"
    assert len(llm.calls) == 2
