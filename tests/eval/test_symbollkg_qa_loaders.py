"""Multi-hop loaders as SymbolLKG's QA reads them: titled passages, supporting titles, the
original files and the Hugging Face column form, and malformed records skipped by name."""

from __future__ import annotations

import json
from pathlib import Path

from kgreason.eval import loaders as L
from kgreason.eval.datasets import load

ORIGINAL = {
    "_id": "h1",
    "question": "Were Scott Derrickson and Ed Wood of the same nationality?",
    "answer": "yes",
    "type": "comparison",
    "supporting_facts": [["Scott Derrickson", 0], ["Ed Wood", 0], ["Ed Wood", 1]],
    "context": [
        ["Scott Derrickson", ["Scott Derrickson is an American director.", " He lives in LA."]],
        ["Ed Wood", ["Ed Wood was an American filmmaker.", " He made films."]],
    ],
}
HF = {
    "id": "h2",
    "question": ORIGINAL["question"],
    "answer": "yes",
    "type": "comparison",
    "supporting_facts": {"title": ["Scott Derrickson", "Ed Wood"], "sent_id": [0, 0]},
    "context": {
        "title": ["Scott Derrickson", "Ed Wood"],
        "sentences": [["Scott Derrickson is an American director."], ["Ed Wood was American."]],
    },
}


def _write(tmp_path: Path, records: list) -> Path:
    f = tmp_path / "hotpot.json"
    f.write_text(json.dumps(records))
    return f


def test_original_and_hugging_face_forms_give_the_same_shape(tmp_path: Path):
    r = L.load_json_dataset(_write(tmp_path, [ORIGINAL, HF]), L.parse_hotpot, "hotpotqa")
    assert not r.problems
    a, b = r.records
    assert [p.title for p in a.passages] == ["Scott Derrickson", "Ed Wood"]
    # HotpotQA's sentences carry their own leading space: joined with exactly one
    assert a.passages[0].text == "Scott Derrickson is an American director. He lives in LA."
    assert a.supporting_titles == ["Scott Derrickson", "Ed Wood"]  # once each, in order
    assert b.supporting_titles == ["Scott Derrickson", "Ed Wood"] and b.id == "h2"
    assert b.passages[1].text == "Ed Wood was American."


def test_malformed_context_is_a_named_skip(tmp_path: Path):
    bad_pair = {**ORIGINAL, "_id": "b1", "context": [["only a title"]]}
    ragged = {**HF, "id": "b2", "context": {"title": ["a", "b"], "sentences": [["x"]]}}
    not_list = {**ORIGINAL, "_id": "b3", "context": "Scott Derrickson is American."}
    r = L.load_json_dataset(
        _write(tmp_path, [bad_pair, ragged, not_list, ORIGINAL]), L.parse_hotpot, "hotpotqa"
    )
    assert [x.id for x in r.records] == ["h1"]
    assert len(r.problems) == 3
    assert "not [title, sentences]" in r.problems[0].message
    assert "list of [title, sentences]" in r.problems[2].message


def test_2wiki_is_the_papers_short_name(tmp_path: Path):
    (tmp_path / "multihop" / "2wiki").mkdir(parents=True)
    (tmp_path / "multihop" / "2wiki" / "dev.json").write_text(json.dumps([ORIGINAL]))
    short = load("2wiki", root=tmp_path).records
    long = load("2wikimultihopqa", root=tmp_path).records
    assert [r.supporting_titles for r in short] == [r.supporting_titles for r in long]
    assert short[0].task == "multihop"
