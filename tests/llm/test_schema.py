"""Stage schemas: the shipped files, the validator, the rendering into each stage's text
form, and the reading of replies (think tags, truncation, Markdown) around them."""

from __future__ import annotations

import contextlib
import json
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgreason.llm import parse_braced_answers, parse_yes_no
from kgreason.llm.parse import ParseError, extract_json, read_reply, strip_thinking
from kgreason.llm.schema import (
    SchemaError,
    SchemaMismatch,
    StageSchema,
    choice_schema,
    load_stage_schema,
    strict_compatible,
    validate,
)
from kgreason.pog.answering import parse_summary
from kgreason.pog.precise import parse_top_list
from kgreason.pog.topic import parse_keywords


def _shipped() -> list[tuple[str, str]]:
    out = []
    for pkg in ("kgreason.pog", "kgreason.lkg"):
        for p in resources.files(pkg).joinpath("prompts").iterdir():
            if p.name.endswith(".schema.json"):
                out.append((pkg, p.name.removesuffix(".schema.json")))
    return sorted(out)


def test_every_schema_has_a_prompt_beside_it_and_loads():
    shipped = _shipped()
    assert len(shipped) == 11
    for pkg, name in shipped:
        s = load_stage_schema(pkg, name)
        assert resources.files(pkg).joinpath("prompts", f"{name}.txt").is_file()
        assert s.schema["type"] == "object"  # strict mode and llama.cpp want an object root
        assert s.strict_ok is (name != "construct")


@pytest.mark.parametrize(("pkg", "name"), _shipped())
def test_shipped_schemas_are_valid_json_schema(pkg, name):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(load_stage_schema(pkg, name).schema)


@pytest.mark.parametrize(
    ("name", "value", "parser", "expected"),
    [
        ("topic_entity", {"topic_entities": ["A", "B"]}, parse_keywords, ["A", "B"]),
        ("precise_select", {"top_list": [3, 1]}, lambda t: parse_top_list(t, 4, 3), [2, 0]),
        ("summarise", {"summary": "s {E1: x}"}, parse_summary, "s {E1: x}"),
        ("evaluate", {"sufficient": "No", "reason": "r"}, parse_yes_no, False),
        ("answer", {"answer": ["Violin"], "reason": "r"}, parse_braced_answers, ["Violin"]),
        ("final_answer", {"answer": ["A", "B"], "reason": ""}, parse_braced_answers, ["A", "B"]),
    ],
)
def test_reply_templates_render_what_the_stage_parser_reads(name, value, parser, expected):
    s = load_stage_schema("kgreason.pog", name)
    assert parser(s.render(value)) == expected
    assert read_reply(json.dumps(value), parser, s) == expected


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"top_list": ["2"]}, r"\$\.top_list\[0\]: expected integer"),
        ({"top_list": [True]}, "expected integer"),  # a bool is not a number here
        ({"top_list": []}, "fewer than 1"),
        ({}, "missing key 'top_list'"),
        ({"top_list": [1], "why": "x"}, r"unexpected keys \['why'\]"),
        ([1], "expected object"),
    ],
)
def test_validate_names_the_first_problem(value, error):
    with pytest.raises(SchemaMismatch, match=error):
        validate(value, load_stage_schema("kgreason.pog", "precise_select").schema)


def test_enum_and_max_items():
    with pytest.raises(SchemaMismatch, match="not one of"):
        validate(
            {"sufficient": "Maybe", "reason": ""},
            load_stage_schema("kgreason.pog", "evaluate").schema,
        )
    preds = [{"predicted": "a", "indicator": "b"}] * 4
    with pytest.raises(SchemaMismatch, match="more than 3"):
        validate({"predictions": preds}, load_stage_schema("kgreason.pog", "supplement").schema)


def test_schema_using_unchecked_keywords_is_refused():
    with pytest.raises(SchemaError, match="unsupported schema keys"):
        StageSchema("x", {"type": "string", "pattern": "^a"})
    with pytest.raises(SchemaError, match="unknown type"):
        StageSchema("x", {"type": "text"})


def test_strict_compatibility():
    assert strict_compatible(choice_schema("route", ["Z3", "PROVER9"]).schema)
    assert not strict_compatible({"type": "array", "items": {"type": "string"}})
    assert not strict_compatible({"type": "object", "properties": {"a": {"type": "string"}}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>a {No}</think>\n{Yes}", "{Yes}"),
        ("<THINKING>x</THINKING>ok", "ok"),
        ("draft reasoning\n</think>\n\nanswer: {A}", "answer: {A}"),
        ("answer: {A}\n<think>and then I", "answer: {A}"),
        ("no tags at all", "no tags at all"),
    ],
)
def test_strip_thinking(text, expected):
    assert strip_thinking(text) == expected


@pytest.mark.parametrize(
    "text", ["<think>still reasoning when cut", "<think>a</think>", "</think>"]
)
def test_reply_that_is_only_reasoning_is_unreadable(text):
    with pytest.raises(ParseError, match="only reasoning"):
        strip_thinking(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('["Alice", "Future Lead', ["Alice"]),  # a cut name is dropped, not completed
        ('{"a": ["x"], "b": "cut te', {"a": ["x"]}),
        ('{"a": [1, 2', {"a": [1]}),  # a trailing number may be cut too
        ("{'a': [], 'b': [1]}", {"a": [], "b": [1]}),  # not the nested [] alone
        ('Draft {"x": 1}\n```json\n{"a": 1}\n```', {"a": 1}),
        ('{"a": 1, // why\n "b": 2}', {"a": 1, "b": 2}),
    ],
)
def test_extract_json_realistic_defects(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The answer is {Jamaica}.",  # braces in prose are not JSON with defects
        "{E7: Moonlight Sonata} -> music.composer -> {E12: Beethoven}",
        "[" * 70 + '"a"',  # deeper than any reply: not repaired
        '{"a' + "[" * 5000,
    ],
)
def test_extract_json_does_not_invent_values(text):
    with pytest.raises(ParseError):
        extract_json(text)


def test_constrained_reply_not_matching_the_schema_falls_back_to_the_text_parser():
    s = load_stage_schema("kgreason.pog", "evaluate")
    # valid JSON, wrong shape: not trusted; the text parser then finds no verdict either
    with pytest.raises(ParseError):
        read_reply('{"sufficient": "Maybe", "reason": "Yes, it could be"}', parse_yes_no, s)
    # a server that ignored the schema: the model answered in the prompt's form
    assert read_reply("{No}. Missing the teacher.", parse_yes_no, s) is False


def test_program_replies_skip_a_draft_program_inside_think():
    """Codegen has no schema (a program is free-form), but R1-style models draft code in
    their reasoning: the program is the block after it."""
    from kgreason.lkg.codegen import extract_program

    reply = (
        "<think>\nFirst try:\n```smt2\n(assert false)\n```\nNo, x must be bound.\n</think>\n"
        "```smt2\n(declare-const x Int)\n```"
    )
    assert extract_program(reply) == "(declare-const x Int)"
    assert extract_program("<think>\n```smt2\n(assert false)\n```\nstill thinking") == ""


_SCHEMAS = [load_stage_schema("kgreason.pog", n) for n in ("evaluate", "precise_select", "answer")]


@settings(max_examples=200, deadline=None)
@given(
    text=st.one_of(
        st.text(max_size=300),
        st.builds(
            lambda k, v: json.dumps({k: v}),
            st.sampled_from(["sufficient", "top_list", "answer", "reason", "x"]),
            st.recursive(
                st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c),
                max_leaves=8,
            ),
        ),
    ),
    which=st.integers(0, 2),
)
def test_read_reply_gives_a_value_or_parse_error(text, which):
    """Whatever the model sends, a stage gets its value or a ParseError (so `ask_parsed`
    re-asks), never a SchemaMismatch, KeyError or TypeError from the schema path."""
    parsers = [parse_yes_no, lambda t: parse_top_list(t, 5, 3), parse_braced_answers]
    with contextlib.suppress(ParseError):
        read_reply(text, parsers[which], _SCHEMAS[which])
