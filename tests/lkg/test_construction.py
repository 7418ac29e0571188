import pytest
from tests.lkg.test_pipeline_fixtures import (
    SCHOLARSHIP_CONTEXT,
    SCHOLARSHIP_EXTRACTION,
    SCHOLARSHIP_QUESTION,
    js,
)

from kgreason.lkg.construction import (
    LKGBuilder,
    chunk_text,
    extraction_to_graph,
    parse_extraction,
)
from kgreason.lkg.ids import lkg_name_key, node_id
from kgreason.lkg.types import APPLIES_TO, MENTIONS, Extraction
from kgreason.llm.base import LLMOutputError
from kgreason.llm.parse import ParseError
from kgreason.llm.testing import ScriptedLLM


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The blue book", "Blue Book"),
        ("blue books", "Blue Book"),
        ("SmallSoftwareFirm", "Small Software Firm"),
        ("Computer1", "computer 1"),
        ("office_3", "Office 3"),
        ("the Libraries", "library"),
    ],
)
def test_names_that_must_merge(a: str, b: str):
    assert lkg_name_key(a) == lkg_name_key(b)
    assert node_id("entity", a) == node_id("entity", b)


def test_names_that_must_not_merge():
    assert lkg_name_key("Glass") != lkg_name_key("Glas")
    assert node_id("entity", "Alice") != node_id("concept", "Alice")
    assert lkg_name_key("Class") == "class"  # "ss" is not a plural


def test_scholarship_extraction_builds_typed_graph():
    g = extraction_to_graph(Extraction.model_validate(SCHOLARSHIP_EXTRACTION), SCHOLARSHIP_CONTEXT)
    kinds = sorted(n.kind for n in g.nodes.values())
    assert kinds.count("entity") == 6 and kinds.count("concept") == 4
    assert kinds.count("rule") == 2 and kinds.count("constraint") == 1
    c = g.of_kind("constraint")[0]
    assert c.type == "Arithmetic" and not c.flags
    rule = next(n for n in g.of_kind("rule") if "Future Leaders" in n.raw_text)
    rels = {(e.rel, g.nodes[e.dst].name) for e in g.edges.values() if e.src == rule.id}
    assert (MENTIONS, "Future Leaders Scholarship") in rels
    assert (APPLIES_TO, "STEM major") in rels
    assert g.rejected == []


def test_validation_flags_bad_raw_text_and_unknown_entities():
    ex = Extraction.model_validate(
        {
            "Entities": [{"Name": "Computer 1", "Type": "Machine"}],
            "Rules": [
                {
                    "expression": "Y(c1) <= Y(p1)",
                    "raw_text": "A sentence the model invented.",
                    "related_entities": ["Computer1", "Printer 9"],
                }
            ],
            "constraints": [
                {
                    "Constriant_type": "all_different",
                    "raw_text": "each  OFFICE has one",
                    "expression": "x",
                },
                {"type": "Sideways", "raw_text": "Each office has one", "expression": "y"},
            ],
        }
    )
    g = extraction_to_graph(ex, "Each office has one computer. Computer 1 is old.")
    rule = g.of_kind("rule")[0]
    assert "raw_text_not_in_input" in rule.flags
    assert "unlinked:Printer 9" in rule.flags
    # "Computer1" normalises to the same name as "Computer 1": linked, not flagged
    assert not any(f.startswith("linked_fuzzy") for f in rule.flags)
    assert rule.related == [node_id("entity", "Computer 1")]
    by_expr = {n.expression: n for n in g.of_kind("constraint")}
    assert by_expr["x"].type == "AllDifferent" and by_expr["x"].flags == []
    assert by_expr["y"].type == "Generic"
    assert "constraint_type_unknown:Sideways" in by_expr["y"].flags


def test_unusable_items_are_rejected_with_reason():
    ex = Extraction.model_validate(
        {"entities": [{"type": "Person"}, {"name": "The", "type": "X"}], "rules": [{}]}
    )
    g = extraction_to_graph(ex, "text")
    assert len(g.rejected) == 2  # nameless entity, empty rule ("The" stays: a name)
    assert any("rule" in r for r in g.rejected)


def test_parse_extraction_rejects_non_graphs():
    with pytest.raises(ParseError):
        parse_extraction("I cannot help with that.")
    with pytest.raises(ParseError):
        parse_extraction('{"answer": 3}')
    assert parse_extraction('```json\n{"entities": [], "rules": null}\n```').rules == []


def test_chunking_is_sentence_aligned():
    text = " ".join(f"Sentence number {i} is here." for i in range(20))
    chunks = chunk_text(text, 100)
    assert len(chunks) > 1 and all(len(c) <= 100 for c in chunks)
    assert " ".join(chunks) == text


async def test_builder_chunks_and_merges_by_id():
    text = "Alice is a student. " * 3 + "The blue book is on the shelf."
    replies = [
        js({"entities": [{"name": "Alice", "type": "Person"}], "concepts": [{"name": "Student"}],
            "relationships": [{"source": "Alice", "relation": "is a", "target": "Student",
                               "raw_text": "Alice is a student."}]}),
        js({"entities": [{"name": "The blue book", "type": "Book"}, {"name": "alice", "type": "Student"}]}),
    ]  # fmt: skip
    llm = ScriptedLLM({"lkg_construct": replies})
    g = await LKGBuilder(llm, chunk_chars=60).extract(text)
    assert llm.stages_called() == ["lkg_construct", "lkg_construct"]
    names = sorted(n.name for n in g.of_kind("entity"))
    assert names == ["Alice", "The blue book"]  # "alice" merged into "Alice"
    alice = g.nodes[node_id("entity", "Alice")]
    assert alice.type == "Person" and "alice" in alice.aliases
    assert [e.rel for e in g.edges.values()] == ["IS_A"]


async def test_builder_reasks_once_then_raises():
    llm = ScriptedLLM({"lkg_construct": ["no json here", js({"entities": []})]})
    g = await LKGBuilder(llm).extract(SCHOLARSHIP_CONTEXT, SCHOLARSHIP_QUESTION)
    assert g.nodes == {} and len(llm.calls) == 2
    bad = ScriptedLLM({"lkg_construct": ["nope", "still nope"]})
    with pytest.raises(LLMOutputError) as e:
        await LKGBuilder(bad).extract("x.")
    assert e.value.stage == "lkg_construct"


def test_is_a_targets_prefer_concepts():
    ex = Extraction.model_validate(
        {
            "entities": [
                {"name": "Computer", "type": "Machine"},
                {"name": "Computer 1", "type": "Machine"},
            ],
            "concepts": [{"name": "Computer"}],
            "relationships": [{"source": "Computer1", "relation": "IS_A", "target": "computers"}],
        }
    )
    g = extraction_to_graph(ex, "text")
    (e,) = g.edges.values()
    assert (g.nodes[e.src].kind, g.nodes[e.dst].kind) == ("entity", "concept")
    assert e.flags == ["raw_text_missing"]
