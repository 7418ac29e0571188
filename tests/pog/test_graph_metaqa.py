"""The graph side on the bundled MetaQA KB: LLM-free retrieval of gold answers on dev
questions, and path search over a hub whose 3-hop neighbourhood is most of the KG."""

from __future__ import annotations

import pytest
from tests.pog.graph_fixtures import METAQA, HashingEmbedder, metaqa_questions

from kgreason.kg.base import KnowledgeGraph
from kgreason.pog.fuzzy import FuzzySelector
from kgreason.pog.graph import prepare_graph
from kgreason.pog.llm_free import run_llm_free
from kgreason.pog.paths import topic_entity_paths
from kgreason.pog.settings import PoGSettings


async def _within(kg: KnowledgeGraph, start: str, hops: int) -> set[str]:
    return (await kg.expand([start], hops, max_triples=10**7)).entities()


@pytest.fixture(scope="module")
def metaqa_store(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    """The bundled MetaQA KB as the package ships it (ids are names), built in a temp cache."""
    from kgreason.kg.bundled import bundled_store_path
    from kgreason.kg.store import StoreKG

    cache = tmp_path_factory.mktemp("kgreason-cache")
    return StoreKG(bundled_store_path({"KGREASON_CACHE_DIR": str(cache)}))


@pytest.mark.skipif(not METAQA.exists(), reason="shared MetaQA data not present")
@pytest.mark.parametrize("hop", [1, 2, 3])
async def test_metaqa_gold_answer_among_candidates(hop: int, metaqa_store: KnowledgeGraph) -> None:
    kg = metaqa_store
    fz = FuzzySelector(HashingEmbedder())
    # rank every path (W1 large) so the test checks retrieval, not the toy embedder
    settings = PoGSettings(w1=100_000)
    checked = 0
    for question, topic, gold in metaqa_questions(hop, 4):
        (match,) = await kg.search(topic, limit=1, fuzzy=False)
        tid = match.id
        reachable = (set(gold) - {tid}) & await _within(kg, tid, hop)
        if not reachable:
            continue  # the approximate KB lacks the fact
        res = await run_llm_free(
            kg, fz, settings, question, topic_entities=[tid], max_candidates=10**6
        )
        assert res.ok and res.answers == []
        assert reachable & {c.id for c in res.candidates}, question
        checked += 1
    assert checked >= 2


async def test_hub_paths_grow_with_relation_sequences_not_entities(
    metaqa_store: KnowledgeGraph,
) -> None:
    prep = await prepare_graph(metaqa_store, ["Drama"], PoGSettings())
    assert not prep.stats.truncated and prep.stats.entities > 20_000  # most of the KG
    res = topic_entity_paths(prep.graph, ["Drama"], 3, max_paths=20_000)
    assert res.paths and not res.bound_hit and {p.length for p in res.paths} == {3}
    keys = {k for ks in prep.graph.adj.values() for k in ks}
    assert len(res.paths) <= len(keys) ** 3
    ends = {e for p in res.paths for e in p.end_entities()}
    assert len(ends) > 10 * len(res.paths)  # each path holds whole sets of entities
