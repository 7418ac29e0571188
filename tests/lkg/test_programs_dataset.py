"""Logic-LM data files: typed records, malformed records reported with file+position."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgreason.lkg.logiclm.dataset import (
    DatasetError,
    attach_gold,
    load_file,
    parse_program_filename,
)


def test_real_program_and_gold_files(shared_data: Path):
    progs = load_file(shared_data / "logic/logiclm-programs/AR-LSAT_dev_gpt-3.5-turbo.json")
    assert (progs.dataset, progs.split, progs.model) == ("AR-LSAT", "dev", "gpt-3.5-turbo")
    assert len(progs.records) == 231 and not progs.issues
    rec = progs.records[0]
    assert rec.program and rec.program.startswith("# Declarations")
    assert rec.letters == ("A", "B", "C", "D", "E") and rec.answer in rec.letters
    gold = load_file(shared_data / "logic/AR-LSAT/dev.json", programs=False)
    assert gold.dataset == "AR-LSAT" and len(gold.records) == 231
    assert attach_gold(progs, gold) == []
    assert [r.answer for r in progs.records] == [g.answer for g in gold.records]


def test_malformed_records_are_skipped_and_reported(tmp_path: Path):
    good = {"id": "x1", "context": "c", "question": "q?", "options": ["A) yes"],
            "answer": "A", "raw_logic_programs": ["Query:\n..."]}  # fmt: skip
    data = [
        good,
        {**good, "id": "x2", "raw_logic_programs": "not a list"},
        {**good, "id": ""},
        "a string",
        {**good, "id": "x1"},
        {**good, "id": "x3", "options": "A) yes"},
        {**good, "id": "x4", "answer": "(B)"},
    ]
    path = tmp_path / "FOLIO_dev_some-model.json"
    path.write_text(json.dumps(data))
    loaded = load_file(path)
    assert [r.id for r in loaded.records] == ["x1", "x4"]
    assert loaded.records[1].answer == "B" and loaded.records[1].position == 6
    where = {i.position: i.message for i in loaded.issues}
    assert set(where) == {1, 2, 3, 4, 5}
    assert "raw_logic_programs" in where[1] and "'id'" in where[2]
    assert "duplicate id 'x1'" in where[4] and "'options'" in where[5]
    assert all(str(path) in str(i) and f"record {i.position}" in str(i) for i in loaded.issues)


def test_unreadable_files_raise_with_the_path(tmp_path: Path):
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(DatasetError, match=r"bad\.json: not JSON \(line 1\)"):
        load_file(tmp_path / "bad.json")
    (tmp_path / "obj.json").write_text('{"a": 1}')
    with pytest.raises(DatasetError, match="expected a JSON list"):
        load_file(tmp_path / "obj.json")
    with pytest.raises(DatasetError, match=r"missing\.json"):
        load_file(tmp_path / "missing.json")
    assert parse_program_filename(Path("ProofWriter_dev_text-davinci-003.json")) == (
        "ProofWriter", "dev", "text-davinci-003")  # fmt: skip
    assert parse_program_filename(Path("dev.json")) is None
