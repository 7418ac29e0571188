"""PoG paper fidelity (docs/fidelity.md): the default pruning strategy and its names, the
summary replacing the raw paths, the answer prompt's own-knowledge clause, and entity sets
shown whole (bounded by a reported token budget) so an answer cannot hide behind a cut."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from tests.pog.scripted_pog import analysis_reply, answer_from, node_sets, shown_paths
from tests.pog.test_e2e_nijmegen import FRANCE, GERMANY, NIJMEGEN, QUESTION, load_fixture, script

from kgreason.embed import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.kg.base import Triple
from kgreason.kg.memory import MemoryKG
from kgreason.llm.base import Message
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog import answering
from kgreason.pog.fuzzy import FuzzySelector
from kgreason.pog.llm_common import QuestionContext
from kgreason.pog.pipeline import PoG
from kgreason.pog.prompts import load_prompt
from kgreason.pog.pruning import (
    Pruner,
    UnknownStrategy,
    default_strategies,
    fuzzy_branch,
    fuzzy_precise,
)
from kgreason.pog.render import NameBook, render_set, shown_count
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import Hop, QuestionAnalysis, ReasoningPath, TopicEntity


@pytest.fixture(scope="module")
def embedder():
    return build_embedder(EmbedSettings(backend="static"))


# 1. default strategy and names ------------------------------------------------------------


def test_default_is_the_papers_pog_setting_fuzzy_precise() -> None:
    s = PoGSettings()
    assert s.strategy == "fuzzy-precise" and s.w1 == 80 and s.w_max == s.d_max == 3
    assert default_strategies().get(s.strategy) is fuzzy_precise


def test_old_names_are_aliases_stored_as_the_paper_term() -> None:
    """Settings hold the name given; the registry resolves an alias when PoG (or the CLI)
    is built, and refuses an unknown name there."""
    reg = default_strategies()
    assert reg.canonical(PoGSettings(strategy="precise").strategy) == "fuzzy-precise"
    assert reg.canonical(PoGSettings(strategy="branch").strategy) == "fuzzy-branch"
    assert reg.get("branch") is fuzzy_branch and "precise" in reg
    assert reg.names() == ("fuzzy-precise", "three-step", "fuzzy", "fuzzy-branch")
    with pytest.raises(UnknownStrategy, match=r"fuzzy-precise.*precise"):
        reg.canonical(PoGSettings(strategy="3step").strategy)


def test_strategy_steps_follow_algorithm_2(embedder) -> None:
    kg = load_fixture()
    expected = {
        "fuzzy-precise": ["fuzzy", "precise"],
        "three-step": ["fuzzy", "branch", "precise"],
        "fuzzy": ["fuzzy"],
        "fuzzy-branch": ["fuzzy", "branch"],
    }
    for name, steps in expected.items():
        llm = ScriptedLLM(script())
        r = PoG(kg, llm, embedder, PoGSettings(strategy=name)).ask(
            QUESTION, topic_entities=[NIJMEGEN, FRANCE]
        )
        pruned = [t["pruning"] for t in r.trace if t.get("pruning")]
        assert pruned and all([st["step"] for st in p] == steps for p in pruned), (name, pruned)


# 2. the summary replaces the raw paths ----------------------------------------------------

CTX = QuestionContext(
    "Which country contains Weeze Airport?",
    (TopicEntity("m.w", "Weeze Airport"),),
    QuestionAnalysis(
        split_questions=["Which country contains Weeze Airport?"],
        indicator='"Weeze Airport" - contained by - answer(country)',
        ordered_topics=["m.w"],
        predicted_depth=1,
    ),
)
PATHS = [
    "{m.w: Weeze Airport} -> location.location.containedby -> {m.g: Germany}",
    "{m.w: Weeze Airport} -> aviation.airport.serves -> {m.n: Nijmegen, m.k: Kleve}",
    "{m.w: Weeze Airport} -> location.location.geolocation -> {m.u: Unnamed Entity}",
]
SUMMARY = "{m.w: Weeze Airport} is contained by {m.g: Germany}."


def _related(messages: list[Message]) -> str:
    """The Related Paths section of a prompt's own question block."""
    block = messages[0]["content"].rsplit("\nQ: ", 1)[1]
    return block.split("Related Paths:\n", 1)[1].rsplit("\nA:", 1)[0]


async def test_summary_replaces_the_paths_in_evaluate_and_answer() -> None:
    llm = ScriptedLLM(
        {
            "summarise": [f"summary: {SUMMARY}"],
            "evaluate": ["{Yes}. Germany."],
            "answer": ["answer: {Germany}\nreason: summary."],
        }
    )
    s = PoGSettings()
    verdict = await answering.evaluate(llm, CTX, PATHS, s)
    names, _ = await answering.generate_answer(llm, CTX, PATHS, verdict.summary, s)
    assert verdict.sufficient and verdict.summary == SUMMARY and names == ["Germany"]
    by_stage = {c.stage: c.messages for c in llm.calls}
    assert _related(by_stage["summarise"]) == "\n".join(PATHS)  # the summary reads the paths
    for stage in ("evaluate", "answer"):
        assert _related(by_stage[stage]) == SUMMARY  # ... and replaces them
        assert "Kleve" not in by_stage[stage][0]["content"]
    # fewer prompt tokens than the raw paths would cost
    raw = ScriptedLLM({"evaluate": ["{Yes}."], "answer": ["answer: {Germany}"]})
    off = PoGSettings(summary=False)
    await answering.evaluate(raw, CTX, PATHS, off)
    await answering.generate_answer(raw, CTX, PATHS, "", off)
    for with_summary, without in zip(llm.calls[1:], raw.calls, strict=True):
        assert len(with_summary.messages[0]["content"]) < len(without.messages[0]["content"])


async def test_no_summary_shows_raw_paths_and_skips_the_summarise_call() -> None:
    llm = ScriptedLLM({"evaluate": ["{No}. Missing."], "final_answer": ["answer: {Germany}"]})
    s = PoGSettings(summary=False)
    verdict = await answering.evaluate(llm, CTX, PATHS, s)
    await answering.final_answer(llm, CTX, PATHS, s)
    assert not verdict.sufficient and verdict.summary == ""
    assert llm.stages_called() == ["evaluate", "final_answer"]
    for c in llm.calls:
        assert _related(c.messages) == "\n".join(PATHS)


async def test_final_answer_gets_the_summary_too() -> None:
    llm = ScriptedLLM({"summarise": [f"summary: {SUMMARY}"], "final_answer": ["answer: {Germany}"]})
    await answering.final_answer(llm, CTX, PATHS, PoGSettings())
    assert llm.stages_called() == ["summarise", "final_answer"]
    assert _related(llm.calls[1].messages) == SUMMARY


def test_pipeline_records_the_summary_and_both_modes_answer(embedder) -> None:
    kg = load_fixture()
    for summary in (True, False):
        llm = ScriptedLLM(script())
        r = PoG(kg, llm, embedder, PoGSettings(summary=summary)).ask(
            QUESTION, topic_entities=[NIJMEGEN, FRANCE]
        )
        assert [a.id for a in r.answers] == [GERMANY], (summary, r.error)
        step = next(t for t in r.trace if t.get("sufficient"))
        assert ("summary" in step) is summary
        assert ("summarise" in llm.stages_called()) is summary


# 3. answer prompt and entity sets ---------------------------------------------------------


def test_answer_prompt_allows_the_models_own_knowledge() -> None:
    fields = {**CTX.fields(), "paths": SUMMARY}
    text = load_prompt("answer", **fields)
    assert "based on the given knowledge graph paths and your own knowledge" in text
    assert "Summary:" not in text and "$" not in text


def test_render_set_shows_every_member_within_the_token_budget() -> None:
    ids = [f"m.{i:03d}" for i in range(50)]
    names = {i: f"Film number {i}" for i in ids}
    whole = render_set(ids, names, max_items=None, max_tokens=1000)
    assert "more" not in whole and all(i in whole for i in ids)
    cut = render_set(ids, names, max_items=None, max_tokens=40)
    n = shown_count(ids, names, max_items=None, max_tokens=40)
    assert 1 <= n < 50 and cut.endswith(f"... (+{50 - n} more)}}")
    # a single over-long member is still shown (never an empty set)
    assert shown_count(["m.x"], {"m.x": "x" * 10_000}, max_items=None, max_tokens=5) == 1
    assert render_set(ids, names, max_items=8).endswith("(+42 more)}")


def _director_kg() -> MemoryKG:
    """One director with 20 films; the asked-for film sorts 16th (hidden by an 8-member cut)."""
    films = [f"m.f{i:02d}" for i in range(20)]
    names = {f: f"Film {i}" for i, f in enumerate(films)} | {"m.d": "Ann Director"}
    names["m.f15"] = "Zebra Dawn"
    return MemoryKG([Triple("m.d", "film.director.film", f) for f in films], names)


def _director_llm() -> ScriptedLLM:
    def sees_zebra(messages: list[Message]) -> str:
        if any("Zebra Dawn" in p for p in shown_paths(messages)):
            return "{Yes}. The film is in the paths."
        return "{No}. The film is not shown."

    return ScriptedLLM(
        {
            "question_analysis": [
                analysis_reply(
                    ["Which film directed by Ann Director has a zebra?"],
                    '"Ann Director" - directed - answer(film)',
                )
            ],
            "summarise": lambda m: "summary: " + "\n".join(shown_paths(m)),
            "evaluate": sees_zebra,
            "answer": answer_from(lambda p: ["Zebra Dawn"] if "Zebra Dawn" in p else None),
            "supplement": lambda m: "[]",
            "final_answer": answer_from(lambda p: [node_sets(p)[-1][0]]),
        }
    )


def test_a_full_set_shows_the_answer_an_8_member_cut_hid(embedder) -> None:
    q = "Which film directed by Ann Director has a zebra in its title?"
    r = PoG(_director_kg(), _director_llm(), embedder, PoGSettings()).ask(q, ["m.d"])
    assert r.phase == "topic-entity-path" and [a.name for a in r.answers] == ["Zebra Dawn"]
    assert not any("entity sets cut" in b for b in r.bounds_hit)
    # the old 8-member cut: the answer is invisible, and the cut is reported
    old = PoGSettings(set_items=8)
    r = PoG(_director_kg(), _director_llm(), embedder, old).ask(q, ["m.d"])
    assert [a.name for a in r.answers] != ["Zebra Dawn"] and r.phase != "topic-entity-path"
    (note,) = [b for b in r.bounds_hit if "entity sets cut" in b]
    assert "answering prompts: 1 set(s), the largest 20 members shown as 8" in note
    assert "pog.set_items=8" in note


def test_the_token_budget_cut_is_reported(embedder) -> None:
    s = PoGSettings(set_tokens=30)
    r = PoG(_director_kg(), _director_llm(), embedder, s).ask("Films by Ann Director?", ["m.d"])
    (note,) = [b for b in r.bounds_hit if "entity sets cut" in b]
    assert "20 members shown as" in note and "budget 30 tokens a set" in note


async def test_selection_prompts_have_their_own_smaller_budget(embedder) -> None:
    """PrecisePathSelect shows up to 40 paths: its sets get `select_set_tokens`."""
    kg = _director_kg()
    films = tuple(f"m.f{i:02d}" for i in range(20))
    path = ReasoningPath((Hop(("m.d",), "film.director.film", films, True),))
    pruner = Pruner(
        ScriptedLLM({}), FuzzySelector(embedder), NameBook(kg), PoGSettings(select_set_tokens=20)
    )
    (answering,) = await pruner.render([path])
    (selection,) = await pruner.render([path], selection=True)
    assert "Zebra Dawn" in answering and "more" not in answering
    assert "Zebra Dawn" not in selection and "more)}" in selection
    note = pruner.cut_note()
    assert note and "selection prompts: 1 set(s)" in note and "answering" not in note


def test_bad_set_bounds_are_refused() -> None:
    for field in ("set_items", "set_tokens"):
        with pytest.raises(ValidationError, match="at least 1"):
            PoGSettings(**{field: 0})
