"""The loaders keep the gold SPARQL (CWQ `sparql`, WebQSP `Parses[0].Sparql`, GrailQA
`sparql_query`), and the runner derives the row fields from it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from kgreason.eval import loaders as L
from kgreason.eval.datasets import load
from kgreason.eval.methods import Outcome
from kgreason.eval.records import Answer, Record
from kgreason.eval.runner import run

Q = "SELECT ?x WHERE { ns:m.1 ns:a.b ?y . ?y ns:c.d ?x . }"


def _load(tmp_path: Path, parse, rec: dict):
    f = tmp_path / "d.json"
    f.write_text(json.dumps([rec]))
    return L.load_json_dataset(f, parse, "d")


def test_cwq_webqsp_grailqa_keep_their_gold_query(tmp_path: Path):
    cwq = {"ID": "c1", "question": "q?", "answer": "A", "topic_entity": {}, "sparql": Q}
    assert _load(tmp_path, L.parse_cwq, cwq).records[0].sparql == Q
    webqsp = {"QuestionId": "w1", "RawQuestion": "q?", "Parses": [
        {"Sparql": Q, "Answers": [{"AnswerArgument": "m.2", "EntityName": "A",
                                   "AnswerType": "Entity"}]}]}  # fmt: skip
    assert _load(tmp_path, L.parse_webqsp, webqsp).records[0].sparql == Q
    grail = {"qid": 1, "question": "q?", "answer": [{"answer_type": "Value",
             "answer_argument": "3"}], "sparql_query": Q}  # fmt: skip
    assert _load(tmp_path, L.parse_grailqa, grail).records[0].sparql == Q


def test_missing_or_blank_queries_are_none(tmp_path: Path):
    for sparql in (None, "", "  ", 3):
        rec = {"ID": "c1", "question": "q?", "answer": "A", "sparql": sparql}
        assert _load(tmp_path, L.parse_cwq, rec).records[0].sparql is None
    simple = {"QuestionId": "w", "RawQuestion": "q?", "answer": ["A"]}  # the AoG copy
    assert _load(tmp_path, L.parse_webqsp, simple).records[0].sparql is None


def test_shared_cwq_records_carry_their_query(shared_data: Path):
    rec = load("cwq", root=shared_data).records[0]
    assert rec.sparql is not None and "ns:sports.sports_team.team_mascot" in rec.sparql


class _PathMethod:
    name = "paths"

    async def answer(self, record: Record, llm) -> Outcome:
        return Outcome(answers=["A"], paths=[[["m.1", "a.b", "m.3"]]], names={"m.3": "A"})


def test_rows_get_the_fields_only_when_the_record_has_a_query(tmp_path: Path):
    recs = [
        Record("r1", "cwq", "kgqa", "q?", [Answer("A")], sparql=Q),
        Record("r2", "cwq", "kgqa", "q?", [Answer("A")]),
    ]
    asyncio.run(run(recs, _PathMethod(), None, tmp_path / "out", config={}))
    rows = [json.loads(x) for x in (tmp_path / "out/results.jsonl").read_text().splitlines()]
    assert rows[0]["sparql_length"] == 2 and rows[0]["relation_overlap"] == 0.5
    assert rows[0]["gold_relations"] == ["a.b", "c.d"]
    assert "sparql_length" not in rows[1] and "relation_overlap" not in rows[1]
