"""PoG with an LLM whose replies are the PoG paper's own (Table 9, example 1): the question
analysis in the paper's indicator format (no answer(...) node), a sufficiency reply whose
`{Yes}` is not its first verdict (Algorithm 1: `"{Yes}" in Answer`), and the paper's
`answer: {...}` / `reason: ...` reply, verbatim. The KG is the example's Reasoning Path
(Freebase relations as Table 9 shows them) with a few distractors."""

from __future__ import annotations

import pytest
from tests.pog.scripted_pog import select_by, shown_paths
from tests.pog.test_paper_examples_pog import EX1_ANSWER, EX1_INDICATOR, EX1_SPLITS

from kgreason.embed import build_embedder
from kgreason.embed.base import Embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.kg.memory import MemoryKG
from kgreason.llm.base import Message
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.pipeline import PoG
from kgreason.pog.settings import PoGSettings

# PoG Table 9, example 1
QUESTION = "Lou Seal is the mascot for the team that last won the World Series when?"
LOU, GIANTS, WS2014 = "m.lou_seal", "m.sf_giants", "m.ws_2014"
NAMES = {
    LOU: "Lou Seal",
    GIANTS: "San Francisco Giants",
    WS2014: "2014 World Series",
    "m.ws_2012": "2012 World Series",
    "m.ws_2010": "2010 World Series",
    "m.sf": "San Francisco",
    "m.park": "Oracle Park",
    "m.mascot": "Mascot",
    "m.mlb": "Major League Baseball",
}
TRIPLES = [
    (LOU, "sports.mascot.team", GIANTS),
    (GIANTS, "sports.sports_team.championships", WS2014),
    (GIANTS, "sports.sports_team.championships", "m.ws_2012"),
    (GIANTS, "sports.sports_team.championships", "m.ws_2010"),
    (GIANTS, "sports.sports_team.location", "m.sf"),
    (GIANTS, "sports.sports_team.arena_stadium", "m.park"),
    (GIANTS, "sports.sports_team.league", "m.mlb"),
    (LOU, "common.topic.notable_for", "m.mascot"),
    ("m.park", "location.location.containedby", "m.sf"),
]

#: PoG Table 9, example 1: the rows "LLM indicator" and "Split Question", as lines
ANALYSIS = "\n".join(
    [f"LLM indicator: {EX1_INDICATOR}"]
    + [f"split_question {i}: {q}" for i, q in enumerate(EX1_SPLITS, 1)]
)
#: no reply of the evaluation is shown in the paper; this one weighs split question 1 on its
#: own ({No}) before the verdict on both ({Yes}), the shape "first verdict" misread
SUFFICIENT = (
    "On the mascot path alone, split question 2 is not answered: {No}. With "
    "{San Francisco Giants} -> sports.sports_team.championships -> {2014 World Series, 2012 "
    "World Series, 2010 World Series} as well, both split questions are answered: {Yes}."
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return build_embedder(EmbedSettings(backend="static"))


def kg() -> MemoryKG:
    return MemoryKG(TRIPLES, NAMES, name="table9-lou-seal")


def _shows_championships(messages: list[Message]) -> bool:
    block = messages[0]["content"][messages[0]["content"].rindex("\nQ: ") :]
    return "championships" in block and "2014 World Series" in block


def evaluate(messages: list[Message]) -> str:
    if _shows_championships(messages):
        return SUFFICIENT
    return "{No}. The paths do not give the team's championships."


def answer(messages: list[Message]) -> str:
    # the paper's "PoG answer" row, verbatim, once the prompt shows its reasoning path
    return EX1_ANSWER if _shows_championships(messages) else "answer: {unknown}\nreason: none"


def summarise(messages: list[Message]) -> str:
    paths = [p for p in shown_paths(messages) if "championships" in p] or shown_paths(messages)
    return "summary: " + (paths[0] if paths else "no path given")


def script() -> dict:
    return {
        "question_analysis": [ANALYSIS],
        "precise_select": select_by(lambda p: ("championships" in p) + ("mascot.team" in p)),
        "summarise": summarise,
        "evaluate": evaluate,
        "answer": answer,
        "supplement": [
            "Predicted results: {2014 World Series}, {2012 World Series}, {2010 World Series}\n"
            + "\n".join(
                f"Chain of thought {i}: \u201d Lou Seal \u201d - mascot for - team - last won - "
                f"answer(\u201d {y} World Series \u201d)"
                for i, y in enumerate((2014, 2012, 2010), 1)
            )
        ],
        "final_answer": answer,
    }


def test_table9_example1_answered_as_the_paper_says(embedder) -> None:
    llm = ScriptedLLM(script())
    r = PoG(kg(), llm, embedder, PoGSettings()).ask(QUESTION, topic_entities=[LOU])

    assert r.ok, r.error
    assert [(a.name, a.id) for a in r.answers] == [("2014 World Series", WS2014)]
    assert r.phase == "topic-entity-path"
    # the indicator has no answer(...) node: the answer is inferred two hops from Lou Seal
    assert r.analysis.split_questions == EX1_SPLITS
    assert r.analysis.ordered_topics == [LOU] and r.analysis.predicted_depth == 2
    (step,) = [t for t in r.trace if t.get("phase") == "topic-entity-path"]
    assert step["depth"] == 2 and step["sufficient"] is True
    assert llm.stages_called().count("question_analysis") == 1  # read at once, no re-ask
    assert r.unverified_triples == []


def test_the_first_verdict_reading_misses_it(embedder) -> None:
    # the switch keeps the earlier reading: the same reply is a {No}, so exploration goes on
    # past the step the paper answers at
    llm = ScriptedLLM(script())
    settings = PoGSettings(sufficiency_verdict="first")
    r = PoG(kg(), llm, embedder, settings).ask(QUESTION, topic_entities=[LOU])
    assert r.ok, r.error
    first = next(t for t in r.trace if t.get("phase") == "topic-entity-path")
    assert first["depth"] == 2 and first["sufficient"] is False
    assert not any(t.get("sufficient") for t in r.trace)
    assert r.phase == "final-llm-knowledge"
