"""Fuzzy ranking of many paths with a transformer embedder: the static model ranks them
first and only its best `prefilter_top` are embedded by the transformer (pog/fuzzy.py).

Why: a 10M-triple KG's hub question reached fuzzy ranking with 20,000 paths, which MiniLM on
a CPU embedded for ~5 minutes (`kgreason ask --kg ... --topic ...`)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError
from tests.pog.graph_fixtures import HashingEmbedder, nijmegen_kg

from kgreason.embed.static import StaticEmbedder
from kgreason.kg.base import Triple
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.fuzzy import FuzzySelector, prefilter_note, static_prefilter
from kgreason.pog.llm_free import run_llm_free
from kgreason.pog.paths import topic_entity_paths
from kgreason.pog.pipeline import PoG
from kgreason.pog.ranker.selector import RankerSelector
from kgreason.pog.settings import PoGSettings

QUESTION = "who directed the film"


class _Transformer(HashingEmbedder):
    """A costly embedder's stand-in: counts what it embeds."""

    transformer = True

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += list(texts)
        return super().embed(texts)


def _fan(n: int) -> tuple[ClusteredGraph, dict[str, str]]:
    """A film with n relations to n entities, one of them `directed_by`."""
    ts = [Triple("film", f"attribute_{i:03d}_of_catalogue", f"x{i}") for i in range(n - 1)]
    ts.append(Triple("film", "directed_by", "Jane Campion"))
    g = ClusteredGraph.from_triples(ts)
    return g, {e: e for e in g.entities()}


def _selector(top_n: int) -> tuple[FuzzySelector, _Transformer]:
    emb = _Transformer()
    fz = FuzzySelector(emb, prefilter=lambda: StaticEmbedder(), prefilter_top=top_n)
    return fz, emb


def test_many_paths_embed_only_the_static_models_best() -> None:
    g, names = _fan(300)
    paths = topic_entity_paths(g, ["film"], 1, max_paths=1000).paths
    assert len(paths) == 300
    fz, emb = _selector(20)
    ranked = fz.rank(QUESTION, paths, names, top=5)
    assert fz.prefiltered(300, 5) == 20
    assert len(emb.texts) == 1 + 20  # the indicator and the 20 kept paths, nothing else
    assert len(ranked) == 5
    # the static model keeps the path a reader would: its relation names the question's verb
    kept = set(emb.texts[1:])
    assert any("directed_by" in t for t in kept)
    # among the kept, the transformer's own ranking decides (same as ranking only those)
    plain = FuzzySelector(HashingEmbedder())
    chosen = [p for p in paths if _text(p) in kept]
    assert len(chosen) == 20
    assert [s.path for s in ranked] == [s.path for s in plain.rank(QUESTION, chosen, names, top=5)]


def _text(p) -> str:  # type: ignore[no-untyped-def]
    from kgreason.pog.render import render_paths

    return render_paths([p], {e: e for e in p.entities()}, max_items=4, with_ids=False)[0]


def test_few_paths_or_no_top_rank_every_path() -> None:
    g, names = _fan(30)
    paths = topic_entity_paths(g, ["film"], 1, max_paths=1000).paths
    fz, emb = _selector(40)
    plain = FuzzySelector(HashingEmbedder())
    assert fz.prefiltered(30, 5) is None
    assert [s.path for s in fz.rank(QUESTION, paths, names, top=5)] == [
        s.path for s in plain.rank(QUESTION, paths, names, top=5)
    ]
    assert len(emb.texts) == 31
    fz2, _ = _selector(10)
    assert fz2.prefiltered(30, None) is None  # a full ranking is never cut
    assert len(fz2.rank(QUESTION, paths, names)) == 30
    # the W asked for is kept whole even when larger than prefilter_top
    assert fz2.prefiltered(30, 25) == 25 and fz2.prefiltered(30, 40) is None


def test_only_transformer_embedders_get_a_prefilter() -> None:
    from kgreason.embed.cache import CachedEmbedder
    from kgreason.embed.minilm import MiniLMEmbedder

    assert static_prefilter(HashingEmbedder()) is None
    assert static_prefilter(StaticEmbedder()) is None
    assert MiniLMEmbedder.transformer is True
    load = static_prefilter(CachedEmbedder(_Transformer()))  # seen through the cache
    assert load is not None and load().embed(["a film"]).shape[0] == 1
    pog = PoG(nijmegen_kg(), None, _Transformer(), PoGSettings(fuzzy_prefilter=7))
    assert pog.fuzzy.prefilter_top == 7 and pog.fuzzy.prefiltered(100, 3) == 7
    assert PoG(nijmegen_kg(), None, HashingEmbedder()).fuzzy.prefiltered(10**6, 3) is None
    with pytest.raises(ValidationError):
        PoGSettings(fuzzy_prefilter=-1)


async def test_llm_free_reports_the_prefilter() -> None:
    """The result says how many paths the static model cut (bounds_hit, trace)."""
    kg = nijmegen_kg()
    question = "What country bordering France contains an airport that serves Nijmegen?"
    fz, _ = _selector(1)
    settings = PoGSettings(w1=1, fuzzy_prefilter=1)
    res = await run_llm_free(kg, fz, settings, question)
    graph = next(t for t in res.trace if t.get("stage") == "graph")
    n = graph["paths"]
    assert n > 1 and graph["fuzzy_prefilter"] == 1
    assert prefilter_note(n, 1) in res.bounds_hit
    off = await run_llm_free(kg, FuzzySelector(_Transformer()), settings, question)
    graph = next(t for t in off.trace if t.get("stage") == "graph")
    assert "fuzzy_prefilter" not in graph and not any("fuzzy" in b for b in off.bounds_hit)


def test_llm_mode_pruning_funnel_reports_the_prefilter() -> None:
    """PoG with an LLM: the fuzzy step of the pruning funnel says how many paths the
    transformer ranked when the static model cut them."""
    from tests.pog.scripted_pog import answer_from
    from tests.pog.test_e2e_modes import SUPPLEMENT
    from tests.pog.test_e2e_nijmegen import FRANCE, NIJMEGEN, load_fixture, script

    from kgreason.llm.testing import ScriptedLLM

    def run(prefilter: int):
        llm = ScriptedLLM(
            script(
                supplement=[SUPPLEMENT],
                final_answer=answer_from(lambda p: ["Germany"] if "Weeze" in p else None),
            )
        )
        s = PoGSettings(strategy="fuzzy", w_max=1, fuzzy_prefilter=prefilter)
        r = PoG(load_fixture(), llm, _Transformer(), s).ask(
            "What country bordering France contains an airport that serves Nijmegen?",
            topic_entities=[NIJMEGEN, FRANCE],
        )
        return [st for t in r.trace for st in t.get("pruning", []) if st["step"] == "fuzzy"]

    cut = run(1)
    assert cut and any(st["in"] > 1 and st.get("prefiltered") == 1 for st in cut), cut
    assert all(st.get("prefiltered") == 1 for st in cut if st["in"] > 1)
    assert not any("prefiltered" in st for st in run(0))


class _ByName:
    """A path ranker's stand-in: scores a path by the number in its relation's name."""

    def score(self, question, mentions, paths, topics):  # type: ignore[no-untyped-def]
        rels = [p.hops[-1].relation for p in paths]
        return np.array([float(r.split("_")[1]) if r[0] == "a" else -1.0 for r in rels])


def _combined(prefilter_top: int) -> tuple[RankerSelector, _Transformer]:
    emb = _Transformer()
    return RankerSelector(_ByName(), emb, mode="combined", prefilter_top=prefilter_top), emb


def test_combined_ranker_embeds_only_the_rankers_best() -> None:
    """fuzzy_stage = "combined" scored SBERT on every path: minutes on a 10M hub question."""
    g, names = _fan(300)
    paths = topic_entity_paths(g, ["film"], 1, max_paths=1000).paths
    fz, emb = _combined(20)
    assert fz.prefiltered(300, 5) == 20 and fz.prefiltered(20, 5) is None
    ranked = fz.rank(QUESTION, paths, names, top=5)
    assert len(emb.texts) == 1 + 20  # the indicator and the ranker's best 20
    best20 = {f"attribute_{i:03d}_of_catalogue" for i in range(279, 299)}
    assert {sp.path.hops[-1].relation for sp in ranked} <= best20
    # the same as the combined ranking of exactly those 20 paths
    sub = [p for p in paths if p.hops[-1].relation in best20]
    whole, _ = _combined(0)
    assert [sp.path for sp in ranked] == [sp.path for sp in whole.rank(QUESTION, sub, names)][:5]


def test_combined_ranker_without_a_bound_or_a_costly_embedder_embeds_all() -> None:
    g, names = _fan(300)
    paths = topic_entity_paths(g, ["film"], 1, max_paths=1000).paths
    fz, emb = _combined(0)
    fz.rank(QUESTION, paths, names, top=5)
    assert len(emb.texts) == 1 + 300
    cheap = RankerSelector(_ByName(), HashingEmbedder(), mode="combined", prefilter_top=20)
    assert cheap.prefiltered(300, 5) is None
    learned = RankerSelector(_ByName(), _Transformer(), mode="learned", prefilter_top=20)
    assert learned.prefiltered(300, 5) is None
