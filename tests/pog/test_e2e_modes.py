"""PoG on the Nijmegen fixture: the four pruning strategies, PoG-E, LLM-free mode, and every
way a question ends early (each with a named reason and what was found so far)."""

from __future__ import annotations

import re

import pytest
from tests.pog.scripted_pog import answer_from, evaluate_when
from tests.pog.test_e2e_nijmegen import (
    FRANCE,
    GERMANY,
    NIJMEGEN,
    QUESTION,
    WEEZE,
    load_fixture,
    script,
)

from kgreason.embed import build_embedder
from kgreason.embed.base import Embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.kg.base import Triple
from kgreason.kg.memory import MemoryKG
from kgreason.llm.testing import ScriptedLLM
from kgreason.llm.usage import Budget
from kgreason.pog.pipeline import PoG
from kgreason.pog.settings import PoGSettings

SUPPLEMENT = (
    '[{"predicted": "Germany", "indicator": "answer(\\"Germany\\") - borders - \\"France\\""}]'
)
#: PoG-E may keep `contains` or `containedby` between the airport and its country
_ANY_COUNTRY = re.compile(r"Weeze Airport\} (?:->|<-) [^{}]+ (?:->|<-) \{m\.\w+: ([^}]+)\}")


@pytest.fixture(scope="module")
def kg() -> MemoryKG:
    return load_fixture()


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    # the product path: build_embedder wraps the vendored static model in its cache
    return build_embedder(EmbedSettings(backend="static"))


def steps_of(r) -> list[list[str]]:
    return [[s["step"] for s in t["pruning"]] for t in r.trace if t.get("pruning")]


def calls(r) -> dict[str, int]:
    return {k: v["calls"] for k, v in r.usage.items() if k != "total"}


@pytest.mark.parametrize(
    ("strategy", "steps"),
    [
        ("fuzzy", ["fuzzy"]),
        ("precise", ["fuzzy", "precise"]),
        ("branch", ["fuzzy", "branch"]),
        ("three-step", ["fuzzy", "branch", "precise"]),
    ],
)
def test_each_pruning_strategy(kg, embedder, strategy: str, steps: list[str]) -> None:
    s = PoGSettings(strategy=strategy)
    llm = ScriptedLLM(
        script(
            supplement=[SUPPLEMENT],
            final_answer=answer_from(lambda p: ["Germany"] if "Weeze" in p else None),
        )
    )
    r = PoG(kg, llm, embedder, s).ask(QUESTION, topic_entities=[NIJMEGEN, FRANCE])
    assert r.ok, r.error
    assert all(st == steps for st in steps_of(r)), steps_of(r)
    for t in r.trace:
        if t.get("pruning"):
            assert t["pruning"][-1]["out"] <= s.w_max
            assert len(t["paths"]) == t["pruning"][-1]["out"]
    if strategy == "fuzzy":
        assert "precise_select" not in calls(r)  # no LLM in pruning at all
    else:
        # an LLM selector that prefers Weeze + adjoining paths finds the answer in phase 1
        assert r.phase == "topic-entity-path"
        assert [a.id for a in r.answers] == [GERMANY]
        assert calls(r)["precise_select"] >= 1
    if strategy == "branch":
        b = next(st for t in r.trace for st in t.get("pruning", []) if st["step"] == "branch")
        assert b["width"] == s.w_max


def test_pog_e_runs_and_is_reproducible(kg, embedder) -> None:
    def reader(p: str) -> list[str] | None:
        m = _ANY_COUNTRY.search(p)
        return [m.group(1)] if m and "adjoin" in p else None

    def run(seed: int):
        llm = ScriptedLLM(
            script(
                precise_select=script()["precise_select"],
                evaluate=evaluate_when(lambda p: reader(p) is not None),
                answer=answer_from(reader),
                supplement=[SUPPLEMENT],
                final_answer=answer_from(lambda p: ["Germany"] if "Weeze" in p else None),
            )
        )
        s = PoGSettings(variant="pog-e", seed=seed)
        return PoG(kg, llm, embedder, s).ask(QUESTION)

    a, b = run(7), run(7)
    plain = PoG(kg, ScriptedLLM(script()), embedder, PoGSettings()).ask(QUESTION)
    assert a.ok and a.mode == "pog-e" and plain.mode == "pog"
    assert [x.id for x in a.answers] == [GERMANY]
    assert [p.hops for p in a.paths] == [p.hops for p in b.paths]  # seeded, reproducible
    # one relation per clustered edge: fewer triples than plain PoG's subgraph
    assert a.subgraph.reduced_triples < plain.subgraph.reduced_triples
    pairs = [frozenset((t.head, t.tail)) for t in {t for p in a.paths for t in p.triples()}]
    assert len(pairs) == len(set(pairs))  # each cited entity pair kept a single relation
    assert a.unverified_triples == []


def test_llm_free_mode_never_answers(kg, embedder) -> None:
    r = PoG(kg, None, embedder, PoGSettings()).ask(QUESTION, topic_entities=["Nijmegen", FRANCE])
    assert r.ok and r.mode == "llm-free"
    assert r.answers == [] and r.phase is None and r.candidates
    assert "not an answer" in r.trace[0]["note"]
    assert r.usage == {}


def test_unknown_entity_is_named(kg, embedder) -> None:
    llm = ScriptedLLM({"topic_entity": ["topic_entities: {Atlantis}"]})
    r = PoG(kg, llm, embedder, PoGSettings()).ask("Which airport serves Atlantis?")
    assert (r.error_kind, r.answers, r.phase) == ("unknown-entity", [], None)
    assert "Atlantis" in r.error
    assert calls(r) == {"topic_entity": 1}


def test_empty_subgraph_is_named(embedder) -> None:
    kg = MemoryKG([("m.a", "r", "m.b")], {"m.a": "A", "m.b": "B", "m.lonely": "Lonely Town"})
    r = PoG(kg, ScriptedLLM({}), embedder, PoGSettings()).ask(
        "What is near Lonely Town?", topic_entities={"m.lonely": "Lonely Town"}
    )
    assert r.error_kind == "empty-subgraph" and "Lonely Town (m.lonely)" in r.error
    assert r.answers == [] and r.usage["total"]["calls"] == 0


def test_unreadable_reply_mid_question_keeps_what_was_found(kg, embedder) -> None:
    llm = ScriptedLLM(script(evaluate=["It might be Germany.", "Probably yes"]))
    r = PoG(kg, llm, embedder, PoGSettings(strategy="three-step")).ask(QUESTION)
    assert r.error_kind == "llm-unreadable-reply" and "'evaluate'" in r.error
    assert r.answers == [] and r.phase is None
    assert len(r.paths) == 3 and all(p.triples() for p in r.paths)  # pruned paths kept
    (step,) = [t for t in r.trace if t.get("phase") == "topic-entity-path"]
    assert [s["step"] for s in step["pruning"]] == ["fuzzy", "branch", "precise"]
    assert calls(r)["evaluate"] == 2 and calls(r)["summarise"] == 1


def test_budget_ends_the_question(kg, embedder) -> None:
    llm = ScriptedLLM(script())
    r = PoG(kg, llm, embedder, PoGSettings(), budget=Budget(max_calls=3)).ask(QUESTION)
    assert r.error_kind == "llm-budget-exceeded" and "3 LLM calls" in r.error
    assert r.usage["total"]["calls"] == 3 and len(llm.calls) == 3


def test_supplement_alignment_on_a_large_subgraph_uses_name_search(
    kg, embedder, monkeypatch
) -> None:
    from kgreason.pog import exploration

    monkeypatch.setattr(exploration, "ALIGN_ALL_MAX", 5)  # the fixture's subgraph is larger
    llm = ScriptedLLM(
        script(
            evaluate=["{No}"] * 2 + ["{Yes}"],  # phase 1 at D=2, D=3, then supplement
            supplement=[SUPPLEMENT],
            answer=answer_from(lambda p: ["Germany"] if "Weeze" in p else None),
        )
    )
    r = PoG(kg, llm, embedder, PoGSettings(strategy="fuzzy")).ask(QUESTION)
    assert r.ok and r.phase == "llm-supplement", r.error
    sup = next(t for t in r.trace if t.get("aligned") is not None)
    assert sup["aligned"] == {"Germany": GERMANY}
    assert any(b.startswith("supplement alignment:") for b in r.bounds_hit)


def test_cited_triples_missing_from_the_kg_are_flagged(embedder) -> None:
    """The KG changed between retrieval and the check (an endpoint was updated): the triple
    no longer there is flagged, the others are verified."""
    gone = Triple(WEEZE, "location.location.containedby", GERMANY)

    class ChangedKG(MemoryKG):
        async def contains(self, triples):
            found = await super().contains(triples)
            return [t != gone and ok for t, ok in zip(triples, found, strict=True)]

    base = load_fixture()
    kg = ChangedKG(sorted(base._triples), base._names, name="changed")
    r = PoG(kg, ScriptedLLM(script()), embedder, PoGSettings()).ask(QUESTION)
    assert r.ok and [a.id for a in r.answers] == [GERMANY]
    assert gone in {t for p in r.paths for t in p.triples()}
    assert r.unverified_triples and set(r.unverified_triples) == {gone}
