import json

import pytest
from tests.lkg.test_pipeline_fixtures import (
    SCHOLARSHIP_CONTEXT,
    SCHOLARSHIP_EXTRACTION,
    SCHOLARSHIP_QUESTION,
    HashEmbedder,
)

from kgreason.lkg.construction import extraction_to_graph
from kgreason.lkg.ids import node_id
from kgreason.lkg.index import LKGIndex
from kgreason.lkg.retrieval import HybridRetriever, fallback_entities
from kgreason.lkg.storage import LKGStore
from kgreason.lkg.types import Extraction
from kgreason.llm.testing import ScriptedLLM

RULE_ID = node_id("rule", SCHOLARSHIP_EXTRACTION["rules"][0]["expression"])
ARTS_RULE = node_id("rule", SCHOLARSHIP_EXTRACTION["rules"][1]["expression"])
CONSTRAINT_ID = node_id("constraint", "GPA(x) >= 3.8")


@pytest.fixture
def store() -> LKGStore:
    st = LKGStore()
    g = extraction_to_graph(Extraction.model_validate(SCHOLARSHIP_EXTRACTION), SCHOLARSHIP_CONTEXT)
    st.add_document(SCHOLARSHIP_CONTEXT, g)
    return st


def test_fallback_entities_are_graph_names(store: LKGStore):
    idx = LKGIndex(store).refresh()
    ents = fallback_entities(idx, "Is Alice eligible for the Future Leaders Scholarships?")
    assert ents == ["Future Leaders Scholarship", "Alice"]


async def test_hull_reaches_rules_through_entities(store: LKGStore):
    # No embedder and no LLM: exact names + BM25, then the hull adds the constraint that
    # shares no word with the question ("GPA") through Future Leaders Scholarship.
    r = HybridRetriever(LKGIndex(store), hops=1, top_k=3)
    sub = await r.retrieve("Did Alice win it?")
    ids = [n.id for n in sub.nodes]
    assert node_id("entity", "Alice") in ids
    assert sub.pruned is None
    sub2 = await HybridRetriever(LKGIndex(store), hops=1, top_k=3).retrieve(SCHOLARSHIP_QUESTION)
    ids2 = [n.id for n in sub2.nodes]
    assert RULE_ID in ids2 and CONSTRAINT_ID in ids2
    # facts touching Alice come along with their raw text
    assert "Alice is a STEM major with a 3.9 GPA." in sub2.raw_texts()


async def test_hops_bound_the_hull(store: LKGStore):
    idx = LKGIndex(store).refresh()
    alice = node_id("entity", "Alice")
    assert idx.hull([alice], 0) == {}
    # Alice -IS_A-> STEM major <-APPLIES_TO- rule: two hops
    assert RULE_ID not in idx.hull([alice], 1)
    assert idx.hull([alice], 2)[RULE_ID] == (2, alice)


async def test_vector_anchors_use_three_indices_and_tau(store: LKGStore):
    idx = LKGIndex(store, HashEmbedder())
    r = HybridRetriever(idx, tau=0.3, hops=0, top_k=5)
    sub = await r.retrieve("Arts Nova Award requires portfolio")
    sources = {s for a in sub.anchors if a.id == ARTS_RULE for s in a.sources}
    assert "vector:rule" in sources
    high = HybridRetriever(idx, tau=0.99, hops=0, top_k=5)
    sub2 = await high.retrieve("Arts Nova Award requires portfolio")
    assert not any(s.startswith("vector") for a in sub2.anchors for s in a.sources)
    # vectors are cached in the store under the embedder's name
    assert len(store.embeddings("test-hash", [ARTS_RULE])) == 1


async def test_llm_query_entities_and_pruning(store: LKGStore):
    def prune(messages):
        cands = json.loads(messages[-1]["content"].rsplit("Candidates: ", 1)[1].split("\n")[0])
        keep = [
            c["ID"]
            for c in cands
            if "Scholarship" in c["Content"] or c["Content"].startswith("Alice")
        ]
        return json.dumps([*keep, "n999"])

    llm = ScriptedLLM(
        {"query_entities": ['["Alice", "Future Leaders Scholarship"]'], "prune": prune}
    )
    r = HybridRetriever(LKGIndex(store, HashEmbedder()), llm=llm, tau=0.4)
    sub = await r.retrieve(SCHOLARSHIP_QUESTION)
    assert llm.stages_called() == ["query_entities", "prune"]
    assert sub.query_entities == ["Alice", "Future Leaders Scholarship"]
    assert sub.pruned is not None and set(sub.pruned) < set(sub.hull)
    kept = {n.id for n in sub.nodes}
    assert RULE_ID in kept and ARTS_RULE not in kept
    assert any("n999" in note for note in sub.notes)


async def test_malformed_llm_replies_fall_back_and_are_recorded(store: LKGStore):
    llm = ScriptedLLM({"query_entities": ["Alice!", "{'a': 1, 'b': 2}"], "prune": ["sure", "ok"]})
    r = HybridRetriever(LKGIndex(store), llm=llm)
    sub = await r.retrieve(SCHOLARSHIP_QUESTION)
    assert sub.pruned is None and sub.nodes  # unpruned hull kept
    assert any(n.startswith("query_entities:") for n in sub.notes)
    assert any(n.startswith("prune:") for n in sub.notes)
    assert sub.query_entities == ["Future Leaders Scholarship", "Alice"]


async def test_pruning_prompt_is_bounded(store: LKGStore):
    llm = ScriptedLLM({"query_entities": ['["Alice"]'], "prune": ['["n1", "n2", "n3"]']})
    r = HybridRetriever(LKGIndex(store), llm=llm, max_prune_candidates=2)
    sub = await r.retrieve(SCHOLARSHIP_QUESTION)
    assert len(sub.hull) > 2 and sub.pruned == sub.hull[:2]
    assert any("cut to the 2 best" in n for n in sub.notes)
    assert any("n3" in n for n in sub.notes)  # an ID outside the candidates is ignored
