"""The stages' real call sites send their schemas (not only `ask_parsed` when told to), and
read the constrained JSON a structured-output server would return."""

from __future__ import annotations

import json

from kgreason.lkg.construction import LKGBuilder, extraction_to_graph
from kgreason.lkg.index import LKGIndex
from kgreason.lkg.retrieval import HybridRetriever, RetrievedSubgraph
from kgreason.lkg.router import route
from kgreason.lkg.storage import LKGStore
from kgreason.lkg.types import Extraction, Node
from kgreason.llm.schema import load_stage_schema
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.analysis import analyze_question
from kgreason.pog.answering import evaluate, final_answer, generate_answer
from kgreason.pog.llm_common import QuestionContext
from kgreason.pog.precise import precise_select
from kgreason.pog.settings import PoGSettings
from kgreason.pog.supplement import predict_supplements
from kgreason.pog.topic import extract_keywords
from kgreason.pog.types import QuestionAnalysis, TopicEntity
from tests.lkg.test_pipeline_fixtures import SCHOLARSHIP_CONTEXT, SCHOLARSHIP_EXTRACTION

S = PoGSettings()
TOPICS = (TopicEntity("m.1", "Moonlight Sonata"),)
CTX = QuestionContext(
    "Which instrument did the teacher of the composer of the Moonlight Sonata play?",
    TOPICS,
    QuestionAnalysis(
        ["Who composed it?"], '"Moonlight Sonata" - composed by - answer(x)', ["m.1"], 1
    ),
)
PATHS = [f"{{E{i}: Moonlight Sonata}} -> r{i} -> {{E9: X{i}}}" for i in range(5)]


def sent(llm: ScriptedLLM, stage: str, pkg: str = "kgreason.pog", name: str | None = None) -> None:
    calls = [c for c in llm.calls if c.stage == stage]
    assert calls, stage
    want = load_stage_schema(pkg, name or stage).schema
    assert all(c.schema == want for c in calls), stage


async def test_pog_stages_send_their_schemas_and_read_constrained_json():
    llm = ScriptedLLM(
        {
            "topic_entity": ['{"topic_entities": ["Moonlight Sonata"]}'],
            "question_analysis": [
                json.dumps(
                    {
                        "split_questions": ["q"],
                        "indicator": '"Moonlight Sonata" - composed by - answer(x)',
                        "topic_order": [],
                    }
                )
            ],
            "precise_select": ['{"top_list": [4, 2]}'],
            # final_answer summarises the paths again (the summary replaces the paths)
            "summarise": ['{"summary": "s"}', '{"summary": "s"}'],
            "evaluate": ['{"sufficient": "Yes", "reason": "r"}'],
            "answer": ['{"answer": ["Violin"], "reason": "r"}'],
            "final_answer": ['{"answer": ["Piano", "Violin"], "reason": "r"}'],
            "supplement": ['{"predictions": [{"predicted": "Haydn", "indicator": "i"}]}'],
        }
    )
    assert await extract_keywords(llm, CTX.question, S) == ["Moonlight Sonata"]
    assert (await analyze_question(llm, CTX.question, list(TOPICS), S)).predicted_depth == 1
    assert await precise_select(llm, CTX, PATHS, 2, S) == [3, 1]
    verdict = await evaluate(llm, CTX, PATHS, S)
    assert verdict.sufficient and verdict.summary == "s"
    assert (await generate_answer(llm, CTX, PATHS, "s", S))[0] == ["Violin"]
    assert (await final_answer(llm, CTX, PATHS, S))[0] == ["Piano", "Violin"]
    assert [p.name for p in await predict_supplements(llm, CTX, PATHS, S)] == ["Haydn"]
    for stage in (
        "topic_entity",
        "question_analysis",
        "precise_select",
        "summarise",
        "evaluate",
        "answer",
        "final_answer",
        "supplement",
    ):
        sent(llm, stage)


async def test_symbollkg_stages_send_their_schemas():
    ext = json.dumps(
        {
            "entities": [{"name": "Alice", "type": "Person"}],
            "concepts": [],
            "relationships": [],
            "rules": [],
            "constraints": [],
        }
    )
    llm = ScriptedLLM(
        {
            "lkg_construct": [ext],
            "query_entities": ['{"entities": ["Alice"]}'],
            "prune": ['{"ids": ["n1"]}'],
            "route": ['{"route": "PYKE"}'],
        }
    )
    g = await LKGBuilder(llm).extract("Alice is a student.")
    assert [n.name for n in g.nodes.values() if n.kind == "entity"] == ["Alice"]
    sent(llm, "lkg_construct", "kgreason.lkg", "construct")
    store = LKGStore()
    store.add_document(
        SCHOLARSHIP_CONTEXT,
        extraction_to_graph(Extraction.model_validate(SCHOLARSHIP_EXTRACTION), SCHOLARSHIP_CONTEXT),
    )
    sub = await HybridRetriever(LKGIndex(store), hops=1, top_k=3, llm=llm).retrieve(
        "Did Alice win?"
    )
    assert len(sub.nodes) == 1
    sent(llm, "query_entities", "kgreason.lkg")
    sent(llm, "prune", "kgreason.lkg")
    horn = RetrievedSubgraph(
        query="q", nodes=[Node(id="r", kind="rule", name="r", type="Rule", raw_text="If a then b.")]
    )
    d = await route(llm, horn, "Is b true?")
    assert d.llm_choice == "horn"
    (call,) = [c for c in llm.calls if c.stage == "route"]
    assert call.schema is not None and "PYKE" in call.schema["properties"]["route"]["enum"]
