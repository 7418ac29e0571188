"""ToG end to end on the Nijmegen fixture (PoG's Figure 1 question) with scripted replies
that read their prompts: the beam, the stopping rules, the labels, the accounting."""

from __future__ import annotations

import json

import pytest

from kgreason.kg.memory import MemoryKG
from kgreason.llm.testing import ScriptedLLM
from kgreason.tog.pipeline import ToG
from kgreason.tog.settings import ToGSettings
from tests.pog.test_e2e_nijmegen import FRANCE, GERMANY, NIJMEGEN, QUESTION, load_fixture
from tests.tog.scripted import listed_candidates, listed_relations, prefer, yes_when

TOPICS = {NIJMEGEN: "Nijmegen", FRANCE: "France"}
AIRPORT_IN_GERMANY = r"Weeze Airport, location.location.containedby, Germany"


@pytest.fixture(scope="module")
def kg() -> MemoryKG:
    return load_fixture()


def script(**overrides) -> dict:
    base = {
        "tog.relation_prune": prefer(
            ["nearby_airports", "containedby", "adjoin"], listed_relations
        ),
        "tog.entity_score": prefer(["Weeze", "Germany"], listed_candidates),
        "tog.reasoning": yes_when(AIRPORT_IN_GERMANY),
        "tog.answer": ["Weeze Airport serves Nijmegen and lies in Germany.\nanswer: {Germany}"],
        "tog.own_knowledge": ["From memory.\nanswer: {Belgium}"],
    }
    return {**base, **overrides}


def test_answers_from_the_paths_once_they_suffice(kg):
    llm = ScriptedLLM(script())
    r = ToG(kg, llm).ask(QUESTION, TOPICS)
    assert r.ok, r.error
    assert r.answers == ["Germany"] and r.answer_ids == [GERMANY]
    assert r.answer_source == "paths" and r.depth == 2
    assert len(r.paths) <= 3 and all(len(p) == 2 for p in r.paths)
    assert any(t.tail == GERMANY and "containedby" in t.relation for p in r.paths for t in p)
    stages = llm.stages_called()
    assert stages.count("tog.reasoning") == 2 and stages[-1] == "tog.answer"
    assert "tog.own_knowledge" not in stages
    # exploration at 0.4, reasoning and answering at 0 (ToG's settings)
    temps = {c.stage: c.temperature for c in llm.calls}
    assert temps == {
        "tog.relation_prune": 0.4,
        "tog.entity_score": 0.4,
        "tog.reasoning": 0.0,
        "tog.answer": 0.0,
    }
    # usage per stage, like PoG's; the total adds up
    assert r.usage["total"]["calls"] == len(llm.calls)
    assert {k for k in r.usage if k != "total"} == set(stages)
    assert [d.depth for d in r.explored] == [1, 2] and r.explored[0].sufficient is False
    d = json.loads(json.dumps(r.to_dict()))  # JSON-ready
    assert d["ok"] is True and d["answer_source"] == "paths" and d["trace"]


def test_depth_exhausted_answers_from_own_knowledge_and_says_so(kg):
    llm = ScriptedLLM(script(**{"tog.reasoning": yes_when(r"^$NEVER")}))
    r = ToG(kg, llm, ToGSettings(depth=2)).ask(QUESTION, TOPICS)
    assert r.ok and r.answers == ["Belgium"] and r.answer_ids == [None]
    assert r.answer_source == "llm-knowledge" and r.depth == 2
    stages = llm.stages_called()
    assert stages.count("tog.reasoning") == 2 and stages[-1] == "tog.own_knowledge"
    assert "tog.answer" not in stages


def test_dead_end_answers_from_what_was_found_half_stop():
    kg = MemoryKG([("m.a", "r.one", "m.b")], {"m.a": "Alpha", "m.b": "Beta"})
    llm = ScriptedLLM({"tog.reasoning": ["{No}. Not yet."], "tog.answer": ["answer: {Beta}"]})
    r = ToG(kg, llm).ask("What does Alpha lead to?", {"m.a": "Alpha"})
    assert r.answer_source == "half-stop" and r.answers == ["Beta"] and r.answer_ids == ["m.b"]
    assert r.depth == 1 and "tog.relation_prune" not in llm.stages_called()  # one relation


def test_a_name_with_a_comma_on_the_paths_is_one_answer():
    """`answer: {Washington, D.C.}` without quotes: one entity on the paths, not two names."""
    kg = MemoryKG([("m.a", "r.one", "m.b")], {"m.a": "Alpha", "m.b": "Washington, D.C."})
    llm = ScriptedLLM(
        {"tog.reasoning": ["{No}. Not yet."], "tog.answer": ["answer: {Washington, D.C.}"]}
    )
    r = ToG(kg, llm).ask("Where does Alpha lead?", {"m.a": "Alpha"})
    assert r.answers == ["Washington, D.C."] and r.answer_ids == ["m.b"]


def test_no_topic_entity_found_answers_from_own_knowledge(kg):
    llm = ScriptedLLM({"tog.own_knowledge": ["answer: {Germany}"]})
    r = ToG(kg, llm).ask("Which is the largest ocean on earth?")
    assert r.ok and r.topic_entities == [] and r.answer_source == "llm-knowledge"
    assert llm.stages_called() == ["tog.own_knowledge"]


def test_unknown_topic_id_ends_with_a_named_error(kg):
    r = ToG(kg, ScriptedLLM({})).ask(QUESTION, {"m.nosuch": "Nowhere"})
    assert r.error_kind == "unknown-entity" and "m.nosuch" in (r.error or "")
    assert r.answers == []


def test_unreadable_answer_ends_the_question_with_a_typed_error_keeping_the_paths(kg):
    llm = ScriptedLLM(script(**{"tog.answer": ["Germany probably", "I said Germany"]}))
    r = ToG(kg, llm).ask(QUESTION, TOPICS)
    assert r.error_kind == "llm-unreadable-reply" and "tog.answer" in (r.error or "")
    assert r.answers == [] and r.paths  # what was explored is kept
    assert r.usage["tog.answer"]["calls"] == 2


def test_garbage_relation_replies_are_recovered_like_tog_and_recorded(kg):
    llm = ScriptedLLM(script(**{"tog.relation_prune": lambda m: "I'd rather not say."}))
    r = ToG(kg, llm).ask(QUESTION, TOPICS)
    assert r.ok
    assert r.recovered and all(x["stage"] == "tog.relation_prune" for x in r.recovered)
    assert r.answer_source == "llm-knowledge" and r.paths == []


def test_tog_r_walks_relation_chains_without_entity_scoring(kg):
    llm = ScriptedLLM(
        script(**{"tog.reasoning": yes_when(r"nearby_airports -> location.location.containedby")})
    )
    r = ToG(kg, llm, ToGSettings(variant="tog-r")).ask(QUESTION, TOPICS)
    assert r.ok and r.variant == "tog-r" and r.answer_source == "paths"
    assert "tog.entity_score" not in llm.stages_called()
    reasoning = [c for c in llm.calls if c.stage == "tog.reasoning"][-1]
    assert (
        "Nijmegen -> location.location.nearby_airports -> location.location.containedby:"
        in (reasoning.messages[0]["content"])
    )


def test_beam_width_bounds_paths_per_depth(kg):
    llm = ScriptedLLM(script(**{"tog.reasoning": yes_when(r"^$NEVER")}))
    r = ToG(kg, llm, ToGSettings(width=2, depth=3)).ask(QUESTION, TOPICS)
    assert all(len(d.kept) <= 2 for d in r.explored) and len(r.explored) == 3
    for d in r.explored:
        assert all(len(x["kept"]) <= 2 for x in d.relations)


class StrictIds:
    """A MemoryKG that refuses literal ids like a SPARQL endpoint's id check does."""

    def __init__(self, inner: MemoryKG):
        self.inner, self.name = inner, inner.name

    def _check(self, ids):
        from kgreason.kg.base import InvalidIdentifierError

        if any(i.startswith('"') for i in ids):
            raise InvalidIdentifierError(f"{self.name}: not an id")

    async def neighbors(self, ids, *, limit_per_entity=None):
        self._check(ids)
        return await self.inner.neighbors(ids, limit_per_entity=limit_per_entity)

    async def names(self, ids):
        self._check(ids)
        return await self.inner.names(ids)

    def __getattr__(self, attr):
        return getattr(self.inner, attr)


def test_a_literal_reached_is_a_dead_end_not_an_error():
    inner = MemoryKG(
        [("m.a", "r.date", '"1998"'), ("m.a", "r.next", "m.b"), ("m.b", "r.more", "m.c")],
        {"m.a": "Alpha", "m.b": "Beta", "m.c": "Gamma"},
    )
    llm = ScriptedLLM(
        {
            "tog.relation_prune": lambda m: '{"r.date": 0.6, "r.next": 0.4}',
            "tog.reasoning": lambda m: "{No}.",
            "tog.own_knowledge": ["answer: {1998}"],
        }
    )
    r = ToG(StrictIds(inner), llm, ToGSettings(depth=2)).ask("When?", {"m.a": "Alpha"})
    assert r.ok, r.error
    assert r.depth == 2 and r.answer_source == "llm-knowledge"
    kept = {t[2] for p in r.explored[0].kept for t in p}
    assert kept == {'"1998"', "m.b"}  # the literal was a candidate, then a dead end
