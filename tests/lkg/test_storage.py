from pathlib import Path

import numpy as np
import pytest
from tests.lkg.test_pipeline_fixtures import SCHOLARSHIP_CONTEXT, SCHOLARSHIP_EXTRACTION

from kgreason.lkg.construction import extraction_to_graph
from kgreason.lkg.ids import node_id
from kgreason.lkg.storage import LKGStore, StoreError
from kgreason.lkg.types import Extraction

DOC2 = "Alice likes Bob. Carol is a teacher."
EX2 = {
    "entities": [{"name": "Alice", "type": "Person"}, {"name": "Carol", "type": "Person"}],
    "concepts": [{"name": "Teacher"}],
    "relationships": [
        {
            "source": "Carol",
            "relation": "IS_A",
            "target": "Teacher",
            "raw_text": "Carol is a teacher.",
        },
        {"source": "Alice", "relation": "LIKES", "target": "Bob", "raw_text": "Alice likes Bob."},
    ],
}


def _graph(ex: dict, text: str):
    return extraction_to_graph(Extraction.model_validate(ex), text)


def test_add_is_idempotent_and_persistent(tmp_path: Path):
    with LKGStore(tmp_path / "s") as st:
        g = _graph(SCHOLARSHIP_EXTRACTION, SCHOLARSHIP_CONTEXT)
        doc, added = st.add_document(SCHOLARSHIP_CONTEXT, g, source="a.txt")
        assert added
        before = st.counts()
        assert st.add_document(SCHOLARSHIP_CONTEXT, g) == (doc, False)
        assert st.counts() == before
    with LKGStore(tmp_path / "s", create=False) as st:
        assert st.counts() == before
        assert st.documents()[0]["source"] == "a.txt"
        rule = st.get_node(node_id("rule", SCHOLARSHIP_EXTRACTION["rules"][0]["expression"]))
        assert rule is not None and rule.kind == "rule" and "STEM" in rule.raw_text


def test_missing_store_is_named(tmp_path: Path):
    with pytest.raises(StoreError, match="no LKG store"):
        LKGStore(tmp_path / "nowhere.sqlite", create=False)
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not sqlite at all" * 100)
    with pytest.raises(StoreError, match=str(bad)):
        LKGStore(bad)


def test_delete_removes_only_what_the_document_alone_contributed():
    st = LKGStore()
    d1, _ = st.add_document(
        SCHOLARSHIP_CONTEXT, _graph(SCHOLARSHIP_EXTRACTION, SCHOLARSHIP_CONTEXT)
    )
    d2, _ = st.add_document(DOC2, _graph(EX2, DOC2))
    alice, carol = node_id("entity", "Alice"), node_id("entity", "Carol")
    assert st.get_node(carol) is not None
    removed = st.delete_document(d2)
    assert removed["nodes"] == 2  # Carol and Teacher; Alice and Bob also come from doc 1
    assert st.get_node(carol) is None and st.get_node(node_id("concept", "Teacher")) is None
    assert st.get_node(alice) is not None  # shared with doc 1
    assert not any(e.rel == "LIKES" for e in st.edges())
    assert st.bm25(["carol"], 5) == []
    st.delete_document(d1)
    assert st.counts() == {"edges": 0, "documents": 0}
    with pytest.raises(StoreError, match=d1):
        st.delete_document(d1)


def test_fts_bm25_and_quoting():
    st = LKGStore()
    st.add_document(SCHOLARSHIP_CONTEXT, _graph(SCHOLARSHIP_EXTRACTION, SCHOLARSHIP_CONTEXT))
    hits = st.bm25(["scholarship", "stem"], 5)
    top = st.get_node(hits[0][0])
    assert "stem" in (top.name + top.raw_text).lower()
    assert hits == sorted(hits, key=lambda h: -h[1])
    assert st.bm25(['"; DROP TABLE nodes; --', "OR", "NEAR("], 5) == []
    assert st.counts()["rule"] == 2


def test_embeddings_are_keyed_by_model_and_dropped_when_the_text_changes():
    st = LKGStore()
    st.add_document(DOC2, _graph(EX2, DOC2))
    nid = node_id("entity", "Alice")
    st.put_embeddings("m1", {nid: np.ones(4, dtype=np.float32)})
    assert st.embeddings("m2", [nid]) == {}
    assert st.embeddings("m1", [nid])[nid].tolist() == [1, 1, 1, 1]
    # same name, another type: the embedded text ("Alice") is unchanged, the vector stays
    st.add_document(
        "Alice is tall.", _graph({"entities": [{"name": "alice", "type": "Giant"}]}, "x")
    )
    assert nid in st.embeddings("m1", [nid])
    rule = {"rules": [{"expression": "Tall(alice)"}]}
    st.add_document("r1", _graph(rule, "r1"))
    rid = node_id("rule", "Tall(alice)")
    st.put_embeddings("m1", {rid: np.ones(4, dtype=np.float32)})
    rule["rules"][0]["description"] = "Alice is tall"  # now embedded by its description
    st.add_document("r2", _graph(rule, "r2"))
    assert st.embeddings("m1", [rid]) == {}
    assert st.get_node(rid).description == "Alice is tall"
