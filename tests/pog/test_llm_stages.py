"""Unit tests of PoG's LLM stages with the scripted LLM: parsing, re-ask, named errors,
temperatures and token limits."""

from __future__ import annotations

import json

import pytest

from kgreason.embed.static import StaticEmbedder
from kgreason.kg.base import UnknownEntityError
from kgreason.kg.memory import MemoryKG
from kgreason.llm.base import LLMOutputError
from kgreason.llm.parse import ParseError
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog import answering, precise, supplement, topic
from kgreason.pog.analysis import analyze_question, read_indicator
from kgreason.pog.llm_common import QuestionContext
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import QuestionAnalysis, TopicEntity

S = PoGSettings()
TOPICS = [TopicEntity("m.f", "France"), TopicEntity("m.n", "Nijmegen")]
INDICATOR = '"Nijmegen" - served by - airport - contained by - answer(country) - borders - "France"'
ANALYSIS = json.dumps(
    {
        "split_questions": ["Which airport serves Nijmegen?", "Which country borders France?"],
        "indicator": INDICATOR,
        "topic_order": ["Nijmegen", "France"],
    }
)


@pytest.fixture(scope="module")
def embedder() -> StaticEmbedder:
    return StaticEmbedder()


def ctx() -> QuestionContext:
    a = QuestionAnalysis(["Which airport serves Nijmegen?"], INDICATOR, ["m.n", "m.f"], 2)
    return QuestionContext("What country bordering France ...?", tuple(TOPICS), a)


def test_indicator_gives_order_and_depth() -> None:
    r = read_indicator(INDICATOR, ["France", "Nijmegen"])
    assert r.order == [1, 0]
    assert r.distances == {0: 1, 1: 2}
    assert r.depth == 2
    # no answer(...) node, as PoG's Table 9 writes them: the far end is the answer
    r = read_indicator('"Nijmegen" - served by - airport', ["Nijmegen"])
    assert r.answer_inferred and r.depth == 1
    with pytest.raises(ParseError):  # every node a topic: no place for the answer
        read_indicator('"Nijmegen" - near - "France"', ["Nijmegen", "France"])


async def test_question_analysis_parses_and_orders() -> None:
    llm = ScriptedLLM({"question_analysis": ["Sure!\n```json\n" + ANALYSIS + "\n```"]})
    a = await analyze_question(llm, "q?", TOPICS, S)
    assert a.ordered_topics == ["m.n", "m.f"]
    assert a.predicted_depth == 2
    assert len(a.split_questions) == 2
    (call,) = llm.calls
    assert call.stage == "question_analysis" and call.temperature == 0.0
    assert call.max_tokens == 768
    assert '["France", "Nijmegen"]' in call.messages[0]["content"]


async def test_question_analysis_reasks_once_then_names_the_stage() -> None:
    llm = ScriptedLLM({"question_analysis": ["I think France.", ANALYSIS]})
    a = await analyze_question(llm, "q?", TOPICS, S)
    assert a.predicted_depth == 2 and len(llm.calls) == 2
    assert "could not be read" in llm.calls[1].messages[-1]["content"]

    bad = json.dumps({"split_questions": ["x"], "indicator": '"Nijmegen" - near - "France"'})
    llm = ScriptedLLM({"question_analysis": [bad, "{}"]})
    with pytest.raises(LLMOutputError) as e:
        await analyze_question(llm, "q?", TOPICS, S)
    assert e.value.stage == "question_analysis" and len(llm.calls) == 2


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("top_list: {Path 3, Path 1, Path 2}", [2, 0]),
        ("Answer: top_list:{Path:2, Path:9, Path:2}. Explanation", [1]),
        ("TOP_LIST: [3] because...", [2]),
    ],
)
def test_parse_top_list(reply: str, expected: list[int]) -> None:
    assert precise.parse_top_list(reply, 3, 2) == expected


def test_parse_top_list_rejects_unreadable() -> None:
    for bad in ("I pick the second path", "top_list: {Path 7}", "top_list: {}"):
        with pytest.raises(ParseError):
            precise.parse_top_list(bad, 3, 2)


async def test_precise_select_batches_and_skips() -> None:
    paths = [f"{{m.{i}: E{i}}} -> r -> {{m.x: X}}" for i in range(90)]

    def pick(messages):
        # choose the first two candidates, but name them in reverse order
        return "top_list: {Path 2, Path 1}"

    llm = ScriptedLLM({"precise_select": pick})
    picked = await precise.precise_select(llm, ctx(), paths, 3, S)
    # 3 batches (40, 40, 10) keep 2 each (survivors 1,0,41,40,81,80), then one call over them
    assert len(llm.calls) == 4
    assert "Path 6: {m.80: E80}" in llm.calls[-1].messages[0]["content"]
    assert picked == [0, 1]
    assert all(c.temperature == 0.4 and c.max_tokens == 256 for c in llm.calls)

    none = ScriptedLLM({})
    assert await precise.precise_select(none, ctx(), paths[:3], 3, S) == [0, 1, 2]


async def test_precise_select_malformed_twice_is_named() -> None:
    llm = ScriptedLLM({"precise_select": ["Path two looks best", "the second"]})
    with pytest.raises(LLMOutputError) as e:
        await precise.precise_select(llm, ctx(), ["a", "b", "c", "d"], 3, S)
    assert e.value.stage == "precise_select"


async def test_supplement_parse_and_align(embedder: StaticEmbedder) -> None:
    reply = json.dumps(
        [
            {"predicted": "germany", "indicator": '"Nijmegen" - near - "Weeze Airport"'},
            {"predicted": "Weeze airport", "indicator": "answer(x) - in - y"},
            {"predicted": "Atlantis", "indicator": "answer(x) - in - y"},
            {"predicted": "no indicator"},
        ]
    )
    llm = ScriptedLLM({"supplement": ["no idea", reply]})
    preds = await supplement.predict_supplements(llm, ctx(), ["{m.n: Nijmegen}"], S)
    assert [p.name for p in preds] == ["germany", "Weeze airport", "Atlantis"]
    assert llm.calls[0].temperature == 0.4 and llm.calls[0].max_tokens == 768
    names = {"m.g": "Germany", "m.w": "Weeze Airport", "m.n": "Nijmegen", "m.f": "France"}
    aligned, unmatched = supplement.align_predictions(preds, names, embedder, {"m.n", "m.f"})
    assert [(a.entity_id, a.score) for a in aligned] == [("m.g", 1.0), ("m.w", 1.0)]
    assert unmatched == ["Atlantis"]


async def test_supplement_unreadable_is_named() -> None:
    llm = ScriptedLLM({"supplement": ["[]", '[{"predicted": ""}]']})
    with pytest.raises(LLMOutputError) as e:
        await supplement.predict_supplements(llm, ctx(), [], S)
    assert e.value.stage == "supplement"


async def test_evaluate_and_answers() -> None:
    llm = ScriptedLLM(
        {
            "summarise": ["summary: {m.n: Nijmegen} is served by {m.w: Weeze Airport}."],
            "evaluate": ["{Yes}. The paths suffice."],
            "answer": ["answer: {Germany}\nreason: ..."],
            "final_answer": ["answer: {Germany, Belgium} reason: own knowledge"],
        }
    )
    v = await answering.evaluate(llm, ctx(), ["p1"], S)
    assert v.sufficient and "Weeze" in v.summary
    names, _ = await answering.generate_answer(llm, ctx(), ["p1"], v.summary, S)
    assert names == ["Germany"]
    final, _ = await answering.final_answer(llm, ctx(), [], S)
    assert final == ["Germany", "Belgium"]
    assert [c.stage for c in llm.calls] == ["summarise", "evaluate", "answer", "final_answer"]
    assert all(c.temperature == 0.0 and c.max_tokens == 256 for c in llm.calls)
    assert "Weeze Airport}." in llm.calls[1].messages[0]["content"]  # summary shown to evaluate


@pytest.mark.parametrize(
    ("stage", "bad"),
    [
        ("summarise", ["", "   "]),
        ("evaluate", ["Yes, probably", "maybe"]),
        ("answer", ["Germany", "The answer is Germany."]),
        ("final_answer", ["answer: {}", "no"]),
    ],
)
async def test_answering_stages_malformed_twice_are_named(stage: str, bad: list[str]) -> None:
    script = {"summarise": ["summary: s"], "evaluate": ["{No}"], stage: bad}
    llm = ScriptedLLM(script)
    with pytest.raises(LLMOutputError) as e:
        if stage in ("summarise", "evaluate"):
            await answering.evaluate(llm, ctx(), ["p"], S)
        elif stage == "answer":
            await answering.generate_answer(llm, ctx(), ["p"], "s", S)
        else:
            await answering.final_answer(llm, ctx(), ["p"], S)
    assert e.value.stage == stage
    assert [c.stage for c in llm.calls].count(stage) == 2


def _kg() -> MemoryKG:
    return MemoryKG(
        [("m.n", "near", "m.w"), ("m.w", "in", "m.g")],
        {"m.n": "Nijmegen", "m.w": "Weeze Airport", "m.g": "Germany", "m.f": "France"},
    )


async def test_topic_keywords_and_linking(embedder: StaticEmbedder) -> None:
    llm = ScriptedLLM({"topic_entity": ["Topics", "topic_entities: {nijmegen, Weeze Airprt}"]})
    ts = await topic.recognize_topics(_kg(), llm, embedder, "q?", S)
    assert [(t.id, t.keyword) for t in ts] == [("m.n", "nijmegen"), ("m.w", "Weeze Airprt")]
    assert ts[1].score < 1.0  # linked through the approximate search + SBERT ranking
    assert llm.calls[0].stage == "topic_entity" and llm.calls[0].temperature == 0.0

    llm = ScriptedLLM({"topic_entity": ["topic_entities: {Atlantis}"]})
    with pytest.raises(UnknownEntityError, match="Atlantis"):
        await topic.recognize_topics(_kg(), llm, embedder, "q?", S)

    llm = ScriptedLLM({"topic_entity": ["none", "topic_entities: {}"]})
    with pytest.raises(LLMOutputError):
        await topic.recognize_topics(_kg(), llm, embedder, "q?", S)


async def test_given_and_bracketed_topics_skip_the_llm(embedder: StaticEmbedder) -> None:
    none = ScriptedLLM({})
    kg = _kg()
    ts = await topic.recognize_topics(kg, none, embedder, "what is near [Nijmegen]", S)
    assert [t.id for t in ts] == ["m.n"]
    ts = await topic.recognize_topics(kg, none, embedder, "q", S, given={"m.g": "Germany"})
    assert [t.name for t in ts] == ["Germany"]
    ts = await topic.recognize_topics(kg, none, embedder, "q", S, given=["m.w", "France"])
    assert [t.id for t in ts] == ["m.w", "m.f"]
    with pytest.raises(UnknownEntityError, match=r"m\.zz"):
        await topic.recognize_topics(kg, none, embedder, "q", S, given={"m.zz": "X"})
    assert none.calls == []
