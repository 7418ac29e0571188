"""The learned fuzzy stage inside PoG (scripted replies) and the LLM-free answer, on the
synthetic KG whose relation names are opaque."""

from __future__ import annotations

import asyncio

import pytest
from tests.pog.ranker_synth import synth_kg, train_synth
from tests.pog.scripted_chain import chain_llm
from tests.pog.scripted_pog import follows, shown_paths

from kgreason.embed import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.pog.pipeline import PoG
from kgreason.pog.ranker.artefact import RankerError
from kgreason.pog.ranker.factory import build_selector
from kgreason.pog.ranker.selector import RankerSelector
from kgreason.pog.ranker.zeroshot import OrderAlignedRanker
from kgreason.pog.settings import PoGSettings


@pytest.fixture(scope="module")
def artefact(tmp_path_factory):
    out = tmp_path_factory.mktemp("ranker") / "synth"
    train_synth(out)
    return out


@pytest.fixture(scope="module")
def embedder():
    return build_embedder(EmbedSettings(backend="static"))


def _precise_prompts(llm) -> list[list[str]]:
    return [shown_paths(c.messages) for c in llm.calls if c.stage == "precise_select"]


def test_learned_fuzzy_stage_feeds_precise_selection_the_right_path_at_w1_2(artefact, embedder):
    kg = synth_kg()
    settings = PoGSettings(
        strategy="precise", w1=2, w_max=1, ranker=str(artefact), fuzzy_stage="learned"
    )
    fuzzy, _ = build_selector(settings, kg, embedder, llm_free=False)
    assert isinstance(fuzzy, RankerSelector) and fuzzy.mode == "learned"
    question = "which actors acted in the film [film7]"
    llm = chain_llm(question, "film7", ["p4"])
    pog = PoG(kg, llm, embedder, settings, fuzzy=fuzzy)
    r = asyncio.run(pog.ask_async(question, ["film7"]))
    assert r.ok, r.error
    assert sorted(a.name for a in r.answers) == ["actor12", "actor7"]
    prompts = _precise_prompts(llm)
    assert prompts, [c.stage for c in llm.calls]
    # W1 = 2 of the film's 21 candidate paths: the ranker's first is the gold chain
    assert all(len(p) == 2 and follows(p[0], ["p4"]) for p in prompts)


def test_combined_stage_and_settings_errors(artefact, embedder):
    kg = synth_kg()
    s = PoGSettings(ranker=str(artefact), fuzzy_stage="combined")
    fuzzy, _ = build_selector(s, kg, embedder, llm_free=False)
    assert isinstance(fuzzy, RankerSelector) and fuzzy.mode == "combined"
    names = {"film2": "film2"}
    from kgreason.pog.clustering import ClusteredGraph
    from kgreason.pog.paths import supplement_paths

    g = ClusteredGraph.from_triples(kg._triples)
    paths = supplement_paths(g, ["film2"], n_topics=1, d_max=2, max_paths=500).paths
    ranked = fuzzy.rank("who directed [film2]", paths, names)
    assert [(h.relation, h.forward) for h in ranked[0].path.hops] == [("p1", True)]
    assert len(ranked) == len(paths)
    # sbert: PoG's own FuzzySelector; a learned stage without a ranker is a named error
    assert build_selector(PoGSettings(), kg, embedder, llm_free=False) == (None, [])
    with pytest.raises(RankerError, match=r"needs pog\.ranker"):
        build_selector(
            PoGSettings(ranker="none", fuzzy_stage="learned"), kg, embedder, llm_free=False
        )
    # auto: the bundled ranker only on the KG it was trained on; elsewhere the zero-shot
    # order-aligned ranking, which answers (LLM-free), and no ranker at all for PoG's sbert
    sel, warnings = build_selector(PoGSettings(), kg, embedder, llm_free=True)
    assert isinstance(sel.ranker, OrderAlignedRanker) and sel.answers and sel.zero_shot
    assert warnings == []
    assert build_selector(PoGSettings(ranker="none"), kg, embedder, llm_free=True) == (None, [])


def test_llm_free_mode_answers_with_the_top_path_and_keeps_its_label(artefact, embedder):
    kg = synth_kg()
    settings = PoGSettings(ranker=str(artefact))
    fuzzy, warnings = build_selector(settings, kg, embedder, llm_free=True)
    assert warnings and "relation vocabulary differs" in warnings[0]  # p3, p4 unseen in meta
    r = PoG(kg, None, embedder, settings, fuzzy=fuzzy).ask("who directed [film4]")
    assert r.mode == "llm-free" and r.ok
    assert [a.name for a in r.answers] == ["director4"]
    assert r.candidates[0].name == "director4"
    stage = next(t for t in r.trace if t.get("stage") == "ranker")
    assert 0.0 < stage["confidence"] <= 1.0 and "not PoG's" in stage["note"]
    assert [(h.relation, h.forward) for h in r.paths[0].hops] == [("p1", True)]


def test_a_zero_shot_ranker_named_in_settings_answers_like_auto(embedder):
    """`--ranker hop-aligned` answers in the LLM-free mode, labelled zero-shot, as the
    order-aligned ranking does under auto on an unfamiliar KG (it ranked but did not answer
    before: the same ranking answered or not by how it was chosen)."""
    from kgreason.pog.labels import ZERO_SHOT_LABEL

    kg = synth_kg()
    fuzzy, _ = build_selector(PoGSettings(ranker="hop-aligned"), kg, embedder, llm_free=True)
    assert fuzzy.answers and fuzzy.zero_shot
    r = PoG(kg, None, embedder, PoGSettings(), fuzzy=fuzzy).ask("who directed [film4]")
    assert r.ok and r.answers and r.answers == r.candidates[: len(r.answers)]
    assert r.label == ZERO_SHOT_LABEL


def test_same_kg_by_fingerprint_or_by_the_files_a_store_was_built_from():
    from types import SimpleNamespace

    from kgreason.pog.ranker.factory import same_kg

    def kg(fp: str, shas: list[str]):
        manifest = SimpleNamespace(sources=[{"sha256": s} for s in shas])
        return SimpleNamespace(fingerprint=lambda: fp, manifest=manifest)

    trained = {"fingerprint": "store:a", "sources_sha256": ["x1"]}
    assert same_kg(trained, kg("store:a", []))
    assert same_kg(trained, kg("store:b", ["x1"]))  # rebuilt store, same input file
    assert not same_kg(trained, kg("store:b", ["x2"]))
    assert not same_kg({"fingerprint": "store:a"}, kg("store:b", []))
