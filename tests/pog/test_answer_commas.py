"""A name with a comma is one answer, not two.

PoG's answer form is `answer: {A, B}`, so a model that writes `answer: {Washington, D.C.}`
used to give two answers, "Washington" and "D.C.", neither an entity. Two defences: a
structured (JSON) reply's list items with commas are rendered quoted and read back whole
(llm.parse.split_items), and an unquoted reply is rejoined where the joined name is an
entity on the answer's paths (pog.answering.rejoin_names)."""

from __future__ import annotations

import json

from tests.pog.scripted_chain import chain_llm

from kgreason.embed.static import StaticEmbedder
from kgreason.kg.memory import MemoryKG
from kgreason.llm.parse import parse_braced_answers, read_reply, split_items
from kgreason.llm.schema import load_stage_schema
from kgreason.pog.answering import rejoin_names
from kgreason.pog.pipeline import PoG
from kgreason.pog.settings import PoGSettings
from kgreason.pog.topic import parse_keywords

TRIPLES = [
    ("The White House", "located_in", "Washington, D.C."),
    ("The White House", "designed_by", "James Hoban"),
    ("Capitol", "located_in", "Washington, D.C."),
    ("Louvre", "located_in", "Paris"),
]


def test_unquoted_comma_name_from_the_model_is_one_answer():
    kg = MemoryKG(TRIPLES)
    q = "where is [The White House] located"
    llm = chain_llm(q, "The White House", ["located_in"])  # writes answer: {Washington, D.C.}
    r = PoG(kg, llm, StaticEmbedder(), PoGSettings()).ask(q)
    assert r.ok, r.error
    assert "answer: {Washington, D.C.}" in r.raw_answer
    assert [(a.name, a.id) for a in r.answers] == [("Washington, D.C.", "Washington, D.C.")]


def test_structured_reply_keeps_list_items_whole():
    schema = load_stage_schema("kgreason.pog", "answer")
    reply = json.dumps({"answer": ["Washington, D.C.", 'The "Big" Apple', "Paris"], "reason": "r"})
    got = read_reply(reply, parse_braced_answers, schema)
    assert got == ["Washington, D.C.", 'The "Big" Apple', "Paris"]
    kw = load_stage_schema("kgreason.pog", "topic_entity")
    reply = json.dumps({"topic_entities": ["Washington, D.C.", "White House"]})
    assert read_reply(reply, parse_keywords, kw) == ["Washington, D.C.", "White House"]


def test_split_items():
    assert split_items("a, b") == ["a", "b"]
    assert split_items('"Washington, D.C.", Paris') == ["Washington, D.C.", "Paris"]
    assert split_items(' "a\\"b" , c ,') == ['a"b', "c"]
    assert split_items("") == split_items(" , ,") == []
    assert split_items('"unterminated, y') == ["unterminated", "y"]
    assert split_items("'single', \"double\"") == ["single", "double"]


def test_rejoin_only_known_names_whose_parts_are_not_all_known():
    known = {"Washington, D.C.", "Paris", "Texas", "Austin", "Austin, Texas"}.__contains__
    assert rejoin_names(["Washington", "D.C.", "Paris"], known) == ["Washington, D.C.", "Paris"]
    # both parts are answers in their own right: the model listed two entities
    assert rejoin_names(["Austin", "Texas"], known) == ["Austin", "Texas"]
    assert rejoin_names(["Lyon", "France"], known) == ["Lyon", "France"]
    assert rejoin_names([], known) == []
