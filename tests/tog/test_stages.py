"""Each ToG stage alone, with the scripted LLM double: what it sends, what it keeps, and
what it does with replies it cannot read (one re-ask, then a typed error or ToG's own
recovery, recorded)."""

from __future__ import annotations

import pytest

from kgreason.kg.base import UNNAMED, Neighbor, Triple
from kgreason.llm.base import LLMOutputError
from kgreason.llm.testing import ScriptedLLM
from kgreason.tog.answer import answer_from_facts, answer_from_knowledge
from kgreason.tog.entities import entity_candidates, keep_best, score_entities
from kgreason.tog.reasoning import is_sufficient
from kgreason.tog.relations import prune_relations, relation_candidates
from kgreason.tog.render import facts
from kgreason.tog.settings import ToGSettings
from kgreason.tog.types import BeamPath, ScoredRelation

Q = "What country bordering France contains an airport that serves Nijmegen?"
S = ToGSettings()
CANDS = {
    "location.location.containedby": ("tail",),
    "location.location.nearby_airports": ("tail",),
    "location.location.time_zones": ("tail",),
    "people.person.place_of_birth": ("head",),
}
GOOD = '{"location.location.nearby_airports": 0.6, "location.location.containedby": 0.3, "location.location.time_zones": 0.1}'


async def test_relation_prune_keeps_width_best_with_scores_at_exploration_temperature():
    llm = ScriptedLLM({"tog.relation_prune": [GOOD]})
    kept = await prune_relations(llm, Q, "Nijmegen", CANDS, ToGSettings(width=2))
    assert [(r.relation, r.score) for r in kept] == [
        ("location.location.nearby_airports", 0.6),
        ("location.location.containedby", 0.3),
    ]
    (call,) = llm.calls
    assert call.stage == "tog.relation_prune" and call.temperature == 0.4
    prompt = call.messages[0]["content"]
    assert "Entity: Nijmegen" in prompt and "people.person.place_of_birth" in prompt
    assert "Pick the 2 relations" in prompt


async def test_relation_prune_recovers_with_one_reask():
    llm = ScriptedLLM({"tog.relation_prune": ["I think airports matter most.", GOOD]})
    kept = await prune_relations(llm, Q, "Nijmegen", CANDS, S)
    assert len(kept) == 3 and len(llm.calls) == 2
    assert "could not be read" in llm.calls[1].messages[-1]["content"]


async def test_relation_prune_garbage_twice_is_a_typed_error():
    llm = ScriptedLLM({"tog.relation_prune": ["<think>hmm</think>", '{"made.up": 1}']})
    with pytest.raises(LLMOutputError) as e:
        await prune_relations(llm, Q, "Nijmegen", CANDS, S)
    assert e.value.stage == "tog.relation_prune" and e.value.raw == '{"made.up": 1}'


async def test_relation_prune_one_candidate_needs_no_call_and_none_gives_nothing():
    llm = ScriptedLLM({})
    one = {"location.location.containedby": ("tail",)}
    assert await prune_relations(llm, Q, "X", one, S) == [
        ScoredRelation("location.location.containedby", 1.0, ("tail",))
    ]
    assert await prune_relations(llm, Q, "X", {}, S) == []
    assert llm.calls == []


def test_relation_candidates_skip_relations_that_only_lead_back():
    path = BeamPath("m.nij", "m.wee", (Triple("m.nij", "airports", "m.wee"),), ("airports",))
    neigh = [
        Neighbor("m.nij", "serves", "tail"),  # back to where the path came from
        Neighbor("m.ger", "containedby", "tail"),
        Neighbor("m.nij", "airports", "head"),
    ]
    assert relation_candidates(path, neigh) == {"containedby": ("tail",)}


def _path() -> BeamPath:
    return BeamPath("m.nij", "m.nij")


def _rel(score: float = 0.5) -> ScoredRelation:
    return ScoredRelation("location.location.nearby_airports", score, ("tail",))


async def test_entity_scores_are_llm_score_times_relation_score():
    names = {"m.a": "Weeze Airport", "m.b": "Eindhoven Airport"}
    llm = ScriptedLLM({"tog.entity_score": ['{"Weeze Airport": 0.8, "Eindhoven Airport": 0.2}']})
    got = await score_entities(llm, Q, _path(), "Nijmegen", _rel(0.5), ["m.a", "m.b"], names, S, [])
    assert got == [("m.a", 0.4), ("m.b", 0.1)]
    assert llm.calls[0].temperature == 0.4
    assert (
        "Relation: location.location.nearby_airports (from Nijmegen)"
        in llm.calls[0].messages[0]["content"]
    )


async def test_unnamed_entities_dropped_beside_named_and_share_when_alone():
    llm = ScriptedLLM({})
    names = {"m.a": "Weeze Airport", "m.cvt": UNNAMED, "m.cvt2": UNNAMED}
    one = await score_entities(llm, Q, _path(), "N", _rel(0.5), ["m.a", "m.cvt"], names, S, [])
    assert one == [("m.a", 0.5)]  # one named candidate: the relation's score, no call
    cvts = await score_entities(llm, Q, _path(), "N", _rel(0.5), ["m.cvt", "m.cvt2"], names, S, [])
    assert cvts == [("m.cvt", 0.25), ("m.cvt2", 0.25)]
    assert llm.calls == []


async def test_entity_score_garbage_gives_equal_scores_and_is_recorded():
    names = {"m.a": "Weeze Airport", "m.b": "Eindhoven Airport"}
    llm = ScriptedLLM({"tog.entity_score": ["no idea", "still no idea"]})
    recovered: list[dict[str, str]] = []
    got = await score_entities(llm, Q, _path(), "N", _rel(1.0), ["m.a", "m.b"], names, S, recovered)
    assert got == [("m.a", 0.5), ("m.b", 0.5)]
    assert (
        recovered[0]["stage"] == "tog.entity_score" and recovered[0]["recovery"] == "equal scores"
    )


async def test_many_candidates_are_sampled_reproducibly():
    ids = [f"m.{i:02d}" for i in range(25)]
    names = {i: f"Airport {i}" for i in ids}

    def equal(messages):
        listed = messages[0]["content"].rsplit("Candidates:\n", 1)[1].split("\nA:")[0].split("\n")
        return "{" + ", ".join(f'"{n}": 0.2' for n in listed) + "}"

    runs = []
    for _ in range(2):
        llm = ScriptedLLM({"tog.entity_score": equal})
        runs.append(await score_entities(llm, Q, _path(), "N", _rel(1.0), ids, names, S, []))
    assert runs[0] == runs[1] and len(runs[0]) == S.entities_retained
    other = ScriptedLLM({"tog.entity_score": equal})
    reseeded = await score_entities(
        other, Q, _path(), "N", _rel(1.0), ids, names, ToGSettings(seed=7), []
    )
    assert [e for e, _ in reseeded] != [e for e, _ in runs[0]]


async def test_tog_r_samples_entities_without_the_llm():
    ids = ["m.a", "m.b", "m.c", "m.d", "m.e"]
    names = {i: i for i in ids}
    llm = ScriptedLLM({})
    got = await score_entities(
        llm, Q, _path(), "N", _rel(0.7), ids, names, ToGSettings(variant="tog-r"), []
    )
    assert len(got) == 3 and all(s == 0.7 for _, s in got) and llm.calls == []


def test_keep_best_cuts_to_width_and_drops_zero_scores():
    paths = [BeamPath("t", f"e{i}", score=s) for i, s in enumerate([0.1, 0.0, 0.5, 0.3, 0.5])]
    assert [p.end for p in keep_best(paths, 3)] == ["e2", "e4", "e3"]
    assert keep_best([BeamPath("t", "e", score=0.0)], 3) == []


def test_entity_candidates_follow_the_relation_in_its_directions():
    path = _path()
    neigh = [
        Neighbor("m.a", "location.location.nearby_airports", "tail"),
        Neighbor("m.z", "location.location.nearby_airports", "head"),
        Neighbor("m.b", "other", "tail"),
    ]
    got = entity_candidates(path, _rel(), neigh)
    assert got == {"m.a": Triple("m.nij", "location.location.nearby_airports", "m.a")}


async def test_reasoning_verdict_at_temperature_zero_and_garbage_means_not_yet():
    llm = ScriptedLLM({"tog.reasoning": ["{Yes}. Enough."]})
    assert await is_sufficient(llm, Q, ["(a, r, b)"], S, []) is True
    assert llm.calls[0].temperature == 0.0 and "(a, r, b)" in llm.calls[0].messages[0]["content"]
    bad = ScriptedLLM({"tog.reasoning": ["perhaps", "it depends"]})
    recovered: list[dict[str, str]] = []
    assert await is_sufficient(bad, Q, [], S, recovered) is False
    assert recovered[0]["recovery"] == "not sufficient"


async def test_answer_stages_and_their_typed_error():
    llm = ScriptedLLM(
        {"tog.answer": ["answer: {Germany}"], "tog.own_knowledge": ["I recall.\nanswer: {Germany}"]}
    )
    assert (await answer_from_facts(llm, Q, ["(a, r, b)"], S))[0] == ["Germany"]
    assert (await answer_from_knowledge(llm, Q, S))[0] == ["Germany"]
    assert "Facts:" not in llm.calls[1].messages[0]["content"]
    bad = ScriptedLLM({"tog.answer": ["Germany, I think", "Germany."]})
    with pytest.raises(LLMOutputError, match=r"tog\.answer"):
        await answer_from_facts(bad, Q, [], S)


def test_facts_show_triples_for_tog_and_relation_chains_for_tog_r():
    t1 = Triple("m.nij", "nearby_airports", "m.wee")
    t2 = Triple("m.wee", "containedby", "m.ger")
    p = BeamPath("m.nij", "m.ger", (t1, t2), ("nearby_airports", "containedby"))
    q = BeamPath("m.nij", "m.wee", (t1,), ("nearby_airports",))
    names = {"m.nij": "Nijmegen", "m.wee": "Weeze Airport", "m.ger": "Germany"}
    assert facts([p, q], names, "tog") == [
        "(Nijmegen, nearby_airports, Weeze Airport)",
        "(Weeze Airport, containedby, Germany)",
    ]
    assert facts([p, q], names, "tog-r") == [
        "Nijmegen -> nearby_airports -> containedby: Germany",
        "Nijmegen -> nearby_airports: Weeze Airport",
    ]


def test_every_tog_template_fills_and_leaves_no_placeholder():
    from importlib import resources
    from string import Template

    from kgreason.prompts import load_prompt, prompt_text

    names = sorted(
        p.name[:-4]
        for p in resources.files("kgreason.tog").joinpath("prompts").iterdir()
        if p.name.endswith(".txt")
    )
    assert names == ["answer", "entity_score", "own_knowledge", "reasoning", "relation_prune"]
    for name in names:
        fields = Template(prompt_text("kgreason.tog", name)).get_identifiers()
        filled = load_prompt("kgreason.tog", name, **{f: f"<{f.upper()}>" for f in fields})
        assert "$" not in filled and all(f"<{f.upper()}>" in filled for f in fields)
