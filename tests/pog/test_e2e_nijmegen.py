"""PoG end to end on the Freebase-style Nijmegen fixture (the paper's Figure 1 question),
with the scripted LLM answering from the paths it is shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.pog.scripted_pog import (
    analysis_reply,
    answer_from,
    evaluate_when,
    select_by,
    shown_paths,
    summarize_first,
)

from kgreason.embed import build_embedder
from kgreason.embed.base import Embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.kg.base import Triple
from kgreason.kg.loaders.rdf import iter_rdf
from kgreason.kg.memory import MemoryKG
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.pipeline import PoG
from kgreason.pog.settings import PoGSettings

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "nijmegen" / "freebase.nt"
QUESTION = "What country bordering France contains an airport that serves Nijmegen?"
NIJMEGEN, FRANCE, GERMANY, WEEZE = "m.0d2hgq", "m.0f4kq", "m.0k3f7", "m.03vp2t"
INDICATOR = '"Nijmegen" - served by - airport - contained by - answer(country) - borders - "France"'
SPLITS = ["Which airport serves Nijmegen?", "Which country contains it and borders France?"]
_AIRPORT_COUNTRY = re.compile(
    r"Weeze Airport\} (?:->|<-) [^{}]*location\.location\.containedby[^{}]* (?:->|<-) "
    r"\{m\.\w+: ([^}]+)\}"
)


def load_fixture() -> MemoryKG:
    names: dict[str, str] = {}
    with FIXTURE.open("rb") as f:
        triples = list(iter_rdf(FIXTURE, f, "nt", names))
    return MemoryKG(triples, names, name="nijmegen-fixture")


@pytest.fixture(scope="module")
def kg() -> MemoryKG:
    return load_fixture()


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    # the product path: build_embedder wraps the vendored static model in its cache
    return build_embedder(EmbedSettings(backend="static"))


def relevance(path: str) -> float:
    """A reader of the question: an airport serving Nijmegen, in a country adjoining France."""
    return 2 * ("Weeze Airport" in path) + 2 * ("adjoin" in path) + ("Germany" in path)


def borders_france(path: str) -> bool:
    return bool(_AIRPORT_COUNTRY.search(path)) and "adjoin" in path and "France}" in path


def country_of_airport(path: str) -> list[str] | None:
    m = _AIRPORT_COUNTRY.search(path)
    return [m.group(1)] if m and borders_france(path) else None


def script(**overrides) -> dict:
    base = {
        "topic_entity": ["topic_entities: {France, Nijmegen}"],
        "question_analysis": [analysis_reply(SPLITS, INDICATOR)],
        "precise_select": select_by(relevance),
        "summarise": summarize_first,
        "evaluate": evaluate_when(borders_france),
        "answer": answer_from(country_of_airport),
    }
    base.update(overrides)
    return base


def stage_calls(result) -> dict[str, int]:
    return {k: v["calls"] for k, v in result.usage.items() if k != "total"}


def test_figure1_answered_germany_via_weeze_in_phase_one(kg, embedder) -> None:
    # the 3-step beam search with the paper's W1=80, W2=20, W_max=3, D_max=3
    settings = PoGSettings(strategy="three-step")
    llm = ScriptedLLM(script())
    r = PoG(kg, llm, embedder, settings).ask(QUESTION)

    assert r.ok, r.error
    assert [(a.name, a.id) for a in r.answers] == [("Germany", GERMANY)]
    assert r.phase == "topic-entity-path"
    assert [t.id for t in r.topic_entities] == [FRANCE, NIJMEGEN]
    assert r.analysis.ordered_topics == [NIJMEGEN, FRANCE]
    assert r.analysis.predicted_depth == 2
    # the cited paths: Nijmegen <- serves <- Weeze Airport -> containedby -> Germany,
    # then Germany's adjoining relationship with France; every triple is in the KG
    assert len(r.paths) == 3
    cited = {t for p in r.paths for t in p.triples()}
    assert (
        Triple(WEEZE, "aviation.airport.serves", NIJMEGEN) in cited
        or Triple(NIJMEGEN, "location.location.nearby_airports", WEEZE) in cited
    )
    assert Triple(WEEZE, "location.location.containedby", GERMANY) in cited
    assert any(GERMANY in (t.head, t.tail) and "adjoin" in t.relation for t in cited)
    assert all(p.hops[0].src == (NIJMEGEN,) and p.hops[-1].dst == (FRANCE,) for p in r.paths)
    assert all(2 < p.length <= 4 for p in r.paths)  # |Topic|*(D-1) < length <= |Topic|*D
    assert r.unverified_triples == []
    # pruning widths of the one exploration step: fuzzy top W1, branch <= W2, precise W_max
    (step,) = [t for t in r.trace if t.get("phase") == "topic-entity-path"]
    assert step["depth"] == 2 and step["sufficient"] is True
    fuzzy, branch, precise = step["pruning"]
    assert fuzzy["in"] == step["candidates"] > settings.w2
    assert fuzzy["out"] == min(fuzzy["in"], settings.w1)
    assert branch["in"] == fuzzy["out"] and branch["out"] <= settings.w2
    assert (precise["in"], precise["out"]) == (branch["out"], 3)
    # usage per stage: one call each, plus the precise calls of branch reduction and step 3
    calls = stage_calls(r)
    assert calls == {
        "topic_entity": 1,
        "question_analysis": 1,
        "precise_select": branch["selector_calls"] + 1,
        "summarise": 1,
        "evaluate": 1,
        "answer": 1,
    }
    assert r.usage["total"]["calls"] == len(llm.calls)
    assert r.usage["total"]["prompt_tokens"] > 0
    for c in llm.calls:
        expected = 0.4 if c.stage == "precise_select" else 0.0
        assert c.temperature == expected, c.stage
    assert r.subgraph.reduced_entities < r.subgraph.entities
    assert {"topic_entity", "subgraph", "reduction", "exploration", "total"} <= set(r.timings_s)


def test_phase_progression_no_no_no_then_final(kg, embedder) -> None:
    """{No} everywhere: phase 1 at D=2..3, LLM supplement, node expand, final answer."""
    preds = (
        '[{"predicted": "Germany", "indicator": "\\"Nijmegen\\" - served by - airport - '
        'contained by - answer(\\"Germany\\") - borders - \\"France\\""}, '
        '{"predicted": "Atlantis", "indicator": "answer(\\"Atlantis\\") - near - \\"France\\""}]'
    )

    def supplement_reply(messages):
        # the supplement prompt shows the phase-1 paths it builds on
        assert shown_paths(messages), "supplement prompt without the phase-1 paths"
        return preds

    llm = ScriptedLLM(
        script(
            evaluate=["{No}. Not enough."] * 20,
            supplement=supplement_reply,
            final_answer=answer_from(lambda p: ["Germany"] if "Weeze Airport" in p else None),
        )
    )
    r = PoG(kg, llm, embedder, PoGSettings()).ask(QUESTION, topic_entities=[FRANCE, NIJMEGEN])
    assert r.ok, r.error
    assert r.phase == "final-llm-knowledge"
    assert [a.name for a in r.answers] == ["Germany"] and r.answers[0].id == GERMANY
    phases = [t["phase"] for t in r.trace if "phase" in t and "candidates" in t]
    assert phases[:3] == ["topic-entity-path", "topic-entity-path", "llm-supplement"]
    assert "node-expand" in phases and phases[-1] == "final-llm-knowledge"
    sup = next(t for t in r.trace if t.get("phase") == "llm-supplement" and "aligned" in t)
    assert sup["aligned"] == {"Germany": GERMANY} and sup["unmatched"] == ["Atlantis"]
    # supplement paths run through the aligned entity
    sup_step = next(t for t in r.trace if t.get("phase") == "llm-supplement" and "candidates" in t)
    assert sup_step["candidates"] > 0 and all("Germany" in p for p in sup_step["paths"])
    expands = [t for t in r.trace if t.get("phase") == "node-expand" and "candidates" in t]
    evaluations = 2 + 1 + len(expands)
    calls = stage_calls(r)
    # one summary per evaluation, and one more for the final answer (summary replaces paths)
    assert calls["evaluate"] == evaluations and calls["summarise"] == evaluations + 1
    assert calls["supplement"] == 1 and calls["final_answer"] == 1
    assert "topic_entity" not in calls and "answer" not in calls
    assert r.unverified_triples == []
    assert stage_calls(r) == {s: llm.stages_called().count(s) for s in calls}
