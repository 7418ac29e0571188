import json
from pathlib import Path

import pytest

from kgreason.eval import loaders as L
from kgreason.eval.datasets import load


@pytest.mark.parametrize(
    ("name", "kwargs", "count"),
    [
        ("cwq", {}, 3531),
        ("grailqa", {}, 1000),
        ("simpleqa", {}, 1000),
        ("webquestions", {}, 2032),
        ("pq", {"hops": 2}, 1908),
        ("pql", {"hops": 3}, 1031),
        ("folio", {}, 204),
        ("prontoqa", {}, 500),
        ("proofwriter", {}, 600),
        ("logicaldeduction", {}, 300),
        ("arlsat", {}, 231),
        ("metaqa", {"hops": 2}, 14872),
    ],
)
def test_real_files_load(shared_data: Path, name, kwargs, count):
    r = load(name, root=shared_data, **kwargs)
    assert len(r.records) == count
    assert not r.problems
    rec = r.records[0]
    assert rec.question and rec.answers


def test_cwq_record_fields(shared_data):
    rec = load("cwq", root=shared_data).records[0]
    assert rec.topic_entities == {"m.03_dwn": "Lou Seal"}
    assert [a.name for a in rec.answers] == ["2014 World Series"]
    assert rec.qtype == "composition"


def test_webqsp_simplified_skips_records_without_answers(shared_data):
    r = load("webqsp", root=shared_data)
    assert len(r.records) + len(r.problems) == 1639
    assert all("no non-empty answer" in p.message for p in r.problems)
    assert all(p.position.startswith("record ") for p in r.problems)
    # blank entries inside an answer list are dropped, the record kept
    rec = next(x for x in r.records if x.id == "WebQTest-958")
    assert all(a.name for a in rec.answers)


def test_webqsp_parses_form(tmp_path):
    f = tmp_path / "WebQSP.test.json"
    f.write_text(
        json.dumps(
            {
                "Questions": [
                    {
                        "QuestionId": "WebQTest-1",
                        "RawQuestion": "what country is nijmegen in?",
                        "Parses": [
                            {
                                "TopicEntityMid": "m.05kq4",
                                "TopicEntityName": "Nijmegen",
                                "Answers": [
                                    {
                                        "AnswerType": "Entity",
                                        "AnswerArgument": "m.059j2",
                                        "EntityName": "Netherlands",
                                    },
                                    {
                                        "AnswerType": "Value",
                                        "AnswerArgument": "1230",
                                        "EntityName": None,
                                    },
                                ],
                            }
                        ],
                    },
                    {"QuestionId": "WebQTest-2", "Parses": []},
                ]
            }
        )
    )
    r = L.load_json_dataset(f, L.parse_webqsp, "webqsp")
    assert len(r.records) == 1
    rec = r.records[0]
    assert rec.topic_entities == {"m.05kq4": "Nijmegen"}
    assert [(a.name, a.id) for a in rec.answers] == [("Netherlands", "m.059j2"), ("1230", None)]
    assert r.problems[0].position == "record 1"


def test_metaqa_topic_and_qtype(shared_data):
    r = load("metaqa", hops=1, path=shared_data / "kgqa/metaqa/1-hop/dev.txt")
    rec = r.records[0]
    assert rec.topic_entities == {"Temuera Morrison": "Temuera Morrison"}
    assert [a.name for a in rec.answers] == ["Once Were Warriors", "Tracker", "River Queen"]
    assert rec.qtype == "actor_to_movie"
    assert rec.hops == 1


def test_bundled_metaqa_matches_shared_copy(shared_data):
    bundled = load("metaqa", hops=3)
    shared = load("metaqa", hops=3, root=shared_data)
    assert [r.question for r in bundled.records] == [r.question for r in shared.records]
    assert [r.qtype for r in bundled.records] == [r.qtype for r in shared.records]


def test_pathquestion_gold_path(shared_data):
    rec = load("pq", hops=2, root=shared_data).records[0]
    assert rec.answers[0].name == "united_kingdom"
    assert rec.gold_path[0] == "frederica_of_mecklenburg-strelitz"
    assert rec.gold_path[-1] == "united_kingdom"
    assert rec.hops == 2


def test_logic_labels(shared_data):
    rec = load("folio", root=shared_data).records[0]
    assert rec.task == "logic" and rec.label in {"A", "B", "C"}
    assert rec.options[0].startswith("A)")
    assert rec.context


def test_malformed_lines_reported_and_skipped(tmp_path):
    f = tmp_path / "dev.txt"
    f.write_text("who directed [Alien]\tRidley Scott\nno brackets here\tX\nbroken line\n")
    r = L.load_metaqa(f, hops=1)
    assert len(r.records) == 1
    assert [p.position for p in r.problems] == ["line 2", "line 3"]
    assert str(f) in str(r.problems[0])


def test_malformed_json_records(tmp_path):
    f = tmp_path / "cwq.json"
    f.write_text(json.dumps([{"ID": "1", "question": "q?", "answer": "a"}, {"ID": "2"}, "junk"]))
    r = L.load_json_dataset(f, L.parse_cwq, "cwq")
    assert len(r.records) == 1
    assert [p.position for p in r.problems] == ["record 1", "record 2"]


def test_jsonl_with_bad_line(tmp_path):
    f = tmp_path / "musique.jsonl"
    good = {
        "id": "2hop_1",
        "question": "Who founded the label of X?",
        "answer": "Y",
        "answer_aliases": ["Mr Y"],
        "paragraphs": [
            {"idx": 0, "title": "X", "paragraph_text": "X is on label Z.", "is_supporting": True},
            {"idx": 1, "title": "Q", "paragraph_text": "unrelated", "is_supporting": False},
        ],
        "question_decomposition": [{}, {}],
    }
    f.write_text(json.dumps(good) + "\n{not json\n")
    r = L.load_json_dataset(f, L.parse_musique, "musique")
    assert len(r.records) == 1 and r.records[0].hops == 2
    assert r.records[0].supporting_titles == ["X"]
    assert r.records[0].answers[0].aliases == ["Mr Y"]
    assert r.problems[0].position == "line 2"


def test_hotpot_format(tmp_path):
    f = tmp_path / "hotpot.json"
    rec = {
        "_id": "5a8b",
        "question": "Which magazine was started first?",
        "answer": "Arthur's Magazine",
        "type": "comparison",
        "supporting_facts": [["Arthur's Magazine", 0], ["First for Women", 0]],
        "context": [
            ["Arthur's Magazine", ["Arthur's Magazine was a", " periodical."]],
            ["First for Women", ["A magazine."]],
        ],
    }
    f.write_text(json.dumps([rec]))
    r = L.load_json_dataset(f, L.parse_hotpot, "hotpotqa")
    assert r.records[0].supporting_titles == ["Arthur's Magazine", "First for Women"]
    assert r.records[0].passages[0].text.startswith("Arthur's Magazine was a")


def test_missing_file_and_unknown_dataset(tmp_path):
    with pytest.raises(L.DatasetError, match="does not exist"):
        load("cwq", root=tmp_path)
    with pytest.raises(L.DatasetError, match="unknown dataset"):
        load("nosuch")
