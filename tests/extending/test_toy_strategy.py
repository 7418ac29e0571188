"""The "add a pruning strategy" recipe, followed: one module (toy_shortest.py) plus one
registration line; settings validate against the registry and PoG prunes with it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kgreason.embed import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.pipeline import PoG
from kgreason.pog.pruning import PruningStrategies, UnknownStrategy, default_strategies
from kgreason.pog.settings import PoGSettings
from tests.extending.toy_shortest import keep_shortest
from tests.pog.scripted_pog import answer_from
from tests.pog.test_e2e_nijmegen import FRANCE, NIJMEGEN, QUESTION, load_fixture, script


@pytest.fixture
def strategies() -> PruningStrategies:
    reg = default_strategies()
    reg.register("shortest", keep_shortest, "the W_max shortest paths")  # the one line
    return reg


def test_settings_check_the_name_and_pog_checks_the_registry(strategies):
    """Settings are data: a strategy name is checked for its form only; the registry PoG
    is built with decides whether it is known (and resolves an alias)."""
    with pytest.raises(ValidationError, match="not a pruning strategy name"):
        PoGSettings(strategy="not a name!")
    emb = build_embedder(EmbedSettings(backend="static"))
    with pytest.raises(UnknownStrategy, match="unknown pruning strategy 'shortest'"):
        PoG(load_fixture(), None, emb, PoGSettings(strategy="shortest"))
    assert PoG(load_fixture(), None, emb, PoGSettings(strategy="precise")).settings.strategy == (
        "fuzzy-precise"
    )
    assert default_strategies().names() == ("fuzzy-precise", "three-step", "fuzzy", "fuzzy-branch")


def test_pog_refuses_a_strategy_its_registry_lacks(strategies):
    s = PoGSettings(strategy="shortest")
    emb = build_embedder(EmbedSettings(backend="static"))
    with pytest.raises(UnknownStrategy, match="shortest"):
        PoG(load_fixture(), None, emb, s)


def test_pog_prunes_with_the_toy(strategies):
    s = PoGSettings(strategy="shortest", w_max=2)
    llm = ScriptedLLM(
        script(final_answer=answer_from(lambda p: ["Germany"] if "Weeze" in p else None))
    )
    emb = build_embedder(EmbedSettings(backend="static"))
    r = PoG(load_fixture(), llm, emb, s, strategies=strategies).ask(
        QUESTION, topic_entities=[NIJMEGEN, FRANCE]
    )
    pruned = [t for t in r.trace if t.get("pruning")]
    assert pruned, r.trace
    for t in pruned:
        assert [st["step"] for st in t["pruning"]] == ["shortest"]
        assert t["pruning"][0]["out"] == len(t["paths"]) <= 2
    calls = {k for k in r.usage if k != "total"}
    assert "precise_select" not in calls  # the toy asks no LLM
