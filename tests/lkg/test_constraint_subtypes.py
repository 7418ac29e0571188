"""Constraint subtypes (paper Table 1): typed relation/operation/value fields on constraint
nodes, the four subclasses as a view, storage round trip and old stores still readable."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kgreason.lkg.construction import extraction_to_graph, parse_extraction
from kgreason.lkg.ids import node_id
from kgreason.lkg.storage import LKGStore
from kgreason.lkg.types import (
    AllDifferentConstraint,
    ArithmeticConstraint,
    GenericConstraint,
    OrderingConstraint,
    constraint_view,
)

CONTEXT = (
    "The computer in office 2 was bought before the printer in office 1. "
    "Each office has a different printer. Applicants must hold a GPA of at least 3.8. "
    "Nobody may be two places at once."
)
REPLY = json.dumps(
    {
        "entities": [{"name": "Computer 2", "type": "Machine"}],
        "concepts": [{"name": "Office", "type": "Concept"}, {"name": "Printer", "type": "Concept"}],
        "constraints": [
            {
                "Constriant_type": "Ordering",
                "relation": "bought before",
                "expression": "Year(Computer_2) < Year(Printer_1)",
                "raw_text": "The computer in office 2 was bought before the printer in office 1.",
                "related_entities": ["Computer 2"],
            },
            {
                "type": "AllDifferent",
                "relation": "HAS_PRINTER",
                "expression": "AllDifferent(Printer(o) for o in Office)",
                "raw_text": "Each office has a different printer.",
                "related_entities": ["Office", "Printer"],
            },
            {
                "constraint_type": "arithmetic",
                "op": ">=",
                "value": "3.8",
                # a field Arithmetic does not have: left out and flagged
                "relation": "GPA_OF",
                "expression": "GPA(x) >= 3.8",
                "raw_text": "Applicants must hold a GPA of at least 3.8.",
            },
            {
                "constraint_type": "Generic",
                "expression": "forall p: not (at(p, a) and at(p, b))",
                "raw_text": "Nobody may be two places at once.",
            },
        ],
    }
)


def _graph(title: str = ""):
    return extraction_to_graph(parse_extraction(REPLY), CONTEXT, title=title)


def _by_type(g) -> dict:
    return {n.type: n for n in g.of_kind("constraint")}


def test_each_subtype_keeps_its_own_fields():
    c = _by_type(_graph())
    assert c["Ordering"].relation == "BOUGHT_BEFORE"  # normalised like relation names
    assert c["Ordering"].operation == "" and c["Ordering"].value is None
    assert c["AllDifferent"].relation == "HAS_PRINTER"
    arith = c["Arithmetic"]
    assert (arith.operation, arith.value) == (">=", 3.8)  # "3.8" read as the number
    assert arith.relation == "" and "field_not_for_type:relation" in arith.flags
    assert c["Generic"].spec() == {} and not c["Generic"].flags


def test_constraint_view_is_the_papers_subclass():
    c = _by_type(_graph())
    views = {t: constraint_view(n) for t, n in c.items()}
    assert isinstance(views["Ordering"], OrderingConstraint)
    assert views["Ordering"].relation == "BOUGHT_BEFORE"
    assert isinstance(views["AllDifferent"], AllDifferentConstraint)
    assert isinstance(views["Arithmetic"], ArithmeticConstraint)
    assert views["Arithmetic"].value == 3.8 and views["Arithmetic"].operation == ">="
    assert views["Arithmetic"].raw_expression == "GPA(x) >= 3.8"
    assert isinstance(views["Generic"], GenericConstraint)
    entity = next(iter(_graph().of_kind("entity")))
    with pytest.raises(TypeError):
        constraint_view(entity)


def test_values_that_are_not_numbers_stay_text():
    reply = json.loads(REPLY)
    reply["constraints"][2]["value"] = "three"
    reply["constraints"][2]["op"] = "count"
    g = extraction_to_graph(parse_extraction(json.dumps(reply)), CONTEXT)
    arith = _by_type(g)["Arithmetic"]
    assert (arith.operation, arith.value) == ("count", "three")
    reply["constraints"][2]["value"] = 1988
    g = extraction_to_graph(parse_extraction(json.dumps(reply)), CONTEXT)
    assert _by_type(g)["Arithmetic"].value == 1988


def test_fields_and_titles_survive_the_store(tmp_path: Path):
    g = _graph(title="Offices")
    with LKGStore(tmp_path / "lkg") as st:
        st.add_document(CONTEXT, g)
    with LKGStore(tmp_path / "lkg", create=False) as st:
        nodes = {n.type: n for n in st.nodes(["constraint"])}
        assert nodes["Arithmetic"].spec() == {"operation": ">=", "value": 3.8}
        assert nodes["Ordering"].relation == "BOUGHT_BEFORE"
        assert all(n.titles == ["Offices"] for n in st.nodes())
        assert all(e.titles == ["Offices"] for e in st.edges())


def test_titles_merge_across_passages():
    g = _graph(title="A")
    extraction_to_graph(parse_extraction(REPLY), CONTEXT, into=g, title="B")
    office = g.nodes[node_id("concept", "Office")]
    assert office.titles == ["A", "B"]
    assert all(e.titles == ["A", "B"] for e in g.edges.values())


#: the store schema before constraint fields and titles (kgreason <= this change)
OLD_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs(doc_id TEXT PRIMARY KEY, source TEXT NOT NULL DEFAULT '', chars INTEGER NOT NULL);
CREATE TABLE nodes(
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL,
  expression TEXT NOT NULL, raw_text TEXT NOT NULL, description TEXT NOT NULL,
  related TEXT NOT NULL, aliases TEXT NOT NULL, flags TEXT NOT NULL);
CREATE TABLE edges(
  src TEXT NOT NULL, rel TEXT NOT NULL, dst TEXT NOT NULL, raw_text TEXT NOT NULL,
  flags TEXT NOT NULL, PRIMARY KEY(src, rel, dst));
CREATE VIRTUAL TABLE nodes_fts USING fts5(id UNINDEXED, name, body);
"""


def test_a_store_written_before_the_fields_still_reads_and_grows(tmp_path: Path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    db.execute(
        "INSERT INTO nodes VALUES ('c1', 'constraint', 'GPA', 'Arithmetic', 'GPA(x) >= 3.8', "
        "'Applicants must hold a GPA of at least 3.8.', '', '[]', '[]', '[]')"
    )
    db.execute("INSERT INTO edges VALUES ('c1', 'MENTIONS', 'e1', '', '[]')")
    db.commit()
    db.close()
    with LKGStore(path, create=False) as st:
        old = st.get_node("c1")
        assert old is not None and old.spec() == {} and old.titles == []
        assert isinstance(constraint_view(old), ArithmeticConstraint)
        assert [e.titles for e in st.edges()] == [[]]
        st.add_document(CONTEXT, _graph(title="Offices"))  # new rows go in beside the old
        assert _by_type_store(st)["Ordering"].relation == "BOUGHT_BEFORE"
    with LKGStore(path, create=False) as st:  # reopening a migrated store changes nothing
        assert st.get_node("c1") is not None and len(st.edges()) > 1


def _by_type_store(st: LKGStore) -> dict:
    return {n.type: n for n in st.nodes(["constraint"]) if n.id != "c1"}


def test_code_generation_and_pruning_see_the_fields():
    from kgreason.lkg.codegen import logfile
    from kgreason.lkg.retrieval import RetrievedSubgraph

    g = _graph()
    sub = RetrievedSubgraph(query="q", nodes=list(g.nodes.values()))
    text = logfile(sub)
    assert "[Constraint:Arithmetic] Applicants must hold a GPA of at least 3.8." in text
    assert "| expression: GPA(x) >= 3.8 | operation: >= | value: 3.8" in text
    assert "| relation: BOUGHT_BEFORE" in text
    assert _by_type(g)["Ordering"].content().endswith("relation=BOUGHT_BEFORE")
