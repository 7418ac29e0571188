"""The "add a dataset" recipe: a parser plus one DatasetSpec in the caller's own table."""

from __future__ import annotations

import json

import pytest

from kgreason.eval.datasets import SPECS, DatasetSpec, default_datasets, load
from kgreason.eval.loaders import DatasetError
from kgreason.eval.records import Record


def parse_riddle(rec: dict, dataset: str) -> Record:
    return Record(id=str(rec["id"]), dataset=dataset, task="logic", question=rec["q"])


def test_a_registered_dataset_loads_and_names_bad_records(tmp_path):
    (tmp_path / "riddles").mkdir()
    rows = [{"id": 1, "q": "Is Max sour?"}, {"id": 2}]
    (tmp_path / "riddles" / "dev.json").write_text(json.dumps(rows), encoding="utf-8")
    specs = default_datasets()
    specs["riddles"] = DatasetSpec(
        "riddles", "logic", "riddles/{split}.json", "dev", "json", parse_riddle
    )
    got = load("riddles", root=tmp_path, specs=specs)
    assert [r.question for r in got.records] == ["Is Max sour?"]
    assert len(got.problems) == 1 and "q" in got.problems[0].message
    assert "riddles" not in SPECS  # the built-in table is untouched
    with pytest.raises(DatasetError, match="unknown dataset 'riddles'"):
        load("riddles", root=tmp_path)
