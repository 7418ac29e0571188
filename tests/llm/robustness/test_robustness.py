"""Every stage that parses an LLM reply, against the reply shapes in this folder (README.md).

Each `<stage>/<case>.txt` is one reply, byte for byte; `<stage>/expected.json` says what it
must parse to (`value`), or that it is unreadable (`outcome`: the stage re-asks once, the
model answers in the same shape again, and the stage raises LLMOutputError naming itself).
Replies go through `ask_parsed` with the stage's real parser and schema, driven by the
scripted LLM double, exactly as the stage calls it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kgreason.eval.methods import parse_final_braces
from kgreason.lkg.construction import parse_extraction
from kgreason.lkg.retrieval import _parse_str_list
from kgreason.lkg.router import _shown_words, parse_route
from kgreason.lkg.solvers import default_solvers
from kgreason.llm import LLMOutputError, ask_parsed, parse_braced_answers, parse_yes_no
from kgreason.llm.schema import StageSchema, choice_schema, load_stage_schema
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.analysis import parse_analysis
from kgreason.pog.answering import parse_summary
from kgreason.pog.precise import parse_top_list
from kgreason.pog.supplement import parse_predictions
from kgreason.pog.topic import parse_keywords
from kgreason.pog.types import QuestionAnalysis, TopicEntity

HERE = Path(__file__).parent
TOPICS = [TopicEntity("m.moonlight", "Moonlight Sonata")]
REMINDER = "Reply in the format asked for."


@dataclass(frozen=True)
class Stage:
    """How the pipeline calls one stage: its name(s), parser, schema, and how a parsed
    value is written in expected.json."""

    stages: tuple[str, ...]
    parser: Callable[[str], Any]
    schema: Callable[[str], StageSchema | None]
    show: Callable[[Any], Any] = lambda v: v


def _pog(name: str) -> StageSchema:
    return load_stage_schema("kgreason.pog", name)


def _analysis(a: QuestionAnalysis) -> dict[str, Any]:
    return {
        "split_questions": a.split_questions,
        "indicator": a.indicator,
        "ordered_topics": a.ordered_topics,
        "predicted_depth": a.predicted_depth,
    }


def _extraction(x: Any) -> dict[str, Any]:
    return {
        "entities": [e.get("name") for e in x.entities],
        "concepts": [c.get("name") for c in x.concepts],
        "relations": len(x.relations),
        "rules": len(x.rules),
        "constraints": len(x.constraints),
    }


SOLVERS = default_solvers()
ROUTE_SCHEMA = choice_schema("route", _shown_words(SOLVERS.route_words()), "route")

STAGES: dict[str, Stage] = {
    "topic_entity": Stage(("topic_entity",), parse_keywords, _pog),
    "question_analysis": Stage(
        ("question_analysis",), lambda t: parse_analysis(t, TOPICS), _pog, _analysis
    ),
    "precise_select": Stage(("precise_select",), lambda t: parse_top_list(t, 5, 3), _pog),
    "summarise": Stage(("summarise",), parse_summary, _pog),
    "evaluate": Stage(("evaluate",), parse_yes_no, _pog),
    "answer": Stage(("answer", "final_answer"), parse_braced_answers, _pog),
    "supplement": Stage(
        ("supplement",), parse_predictions, _pog, lambda ps: [[p.name, p.indicator] for p in ps]
    ),
    "lkg_construct": Stage(
        ("lkg_construct",),
        parse_extraction,
        lambda _: load_stage_schema("kgreason.lkg", "construct"),
        _extraction,
    ),
    "query_entities": Stage(
        ("query_entities",), _parse_str_list, lambda n: load_stage_schema("kgreason.lkg", n)
    ),
    "prune": Stage(("prune",), _parse_str_list, lambda n: load_stage_schema("kgreason.lkg", n)),
    "route": Stage(("route",), lambda t: parse_route(t, SOLVERS), lambda _: ROUTE_SCHEMA),
    # io/cot baselines: ToG's few-shot free-text format, no schema (docs/structured-outputs.md)
    "eval_baseline": Stage(("io", "cot"), parse_final_braces, lambda _: None),
}


def _cases() -> list[Any]:
    out = []
    for folder in sorted(p for p in HERE.iterdir() if p.is_dir() and not p.name.startswith("_")):
        expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
        for stage in STAGES[folder.name].stages:
            for case, exp in expected.items():
                out.append(pytest.param(folder.name, stage, case, exp, id=f"{stage}-{case}"))
    return out


def test_every_folder_is_a_known_stage_with_ten_or_more_shapes():
    folders = [p for p in HERE.iterdir() if p.is_dir() and not p.name.startswith("_")]
    assert {p.name for p in folders} == set(STAGES)
    for folder in folders:
        expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
        replies = {p.stem for p in folder.glob("*.txt")}
        assert replies == set(expected), folder.name  # every reply has an expectation
        assert len(expected) >= 10, folder.name


@pytest.mark.parametrize(("folder", "stage", "case", "exp"), _cases())
async def test_reply_shape(folder: str, stage: str, case: str, exp: dict[str, Any]) -> None:
    spec = STAGES[folder]
    reply = (HERE / folder / f"{case}.txt").read_text(encoding="utf-8")
    schema = spec.schema(stage)
    llm = ScriptedLLM({stage: [reply, reply]})
    msgs = [{"role": "user", "content": f"prompt of {stage}"}]
    if "value" in exp:
        value, raw = await ask_parsed(
            llm, msgs, spec.parser, stage=stage, reminder=REMINDER, schema=schema
        )
        assert spec.show(value) == exp["value"]
        assert raw == reply and len(llm.calls) == 1
    else:
        with pytest.raises(LLMOutputError) as e:
            await ask_parsed(llm, msgs, spec.parser, stage=stage, reminder=REMINDER, schema=schema)
        assert e.value.stage == stage and e.value.raw == reply
        assert len(llm.calls) == 2  # exactly one re-ask, carrying the reminder
        assert REMINDER in llm.calls[1].messages[-1]["content"]
    expected_schema = schema.schema if schema is not None else None
    assert all(c.schema == expected_schema for c in llm.calls)
