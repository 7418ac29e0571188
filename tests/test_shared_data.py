"""Where the full datasets are looked for: one variable, then the folder beside the clone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import data


def test_variable_names_the_directory(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("KGREASON_SHARED_DATA", str(tmp_path))
    assert data.shared_data_dir() == tmp_path.resolve()


def test_variable_naming_no_directory_means_absent(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("KGREASON_SHARED_DATA", str(tmp_path / "missing"))
    assert data.shared_data_dir() is None


def test_unset_falls_back_to_the_folder_beside_the_clone(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("KGREASON_SHARED_DATA", raising=False)
    monkeypatch.setattr(data, "REPO", tmp_path / "kgreason")
    assert data.shared_data_dir() is None
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert data.shared_data_dir() == tmp_path / "shared" / "data"


def test_vendored_slices_have_provenance_and_licence():
    folders = {
        p.parent for p in data.SMALL_DATA.rglob("*") if p.suffix in {".json", ".jsonl", ".txt"}
    }
    folders = {f.parent if f.name.endswith("-hop") else f for f in folders}
    assert folders, "no vendored data found"
    for folder in folders:
        assert (folder / "PROVENANCE.md").is_file(), folder
        assert (folder / "LICENSE").is_file(), folder
    size = sum(p.stat().st_size for p in data.SMALL_DATA.rglob("*") if p.is_file())
    assert size < 4 * 2**20  # "a few MB at most"


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_metaqa_slices_pair_questions_with_types(hops: int):
    d = data.SMALL_DATA / "kgqa" / "metaqa" / f"{hops}-hop"
    questions = (d / "dev.txt").read_text(encoding="utf-8").splitlines()
    types = (d / "qa_dev_qtype.txt").read_text(encoding="utf-8").splitlines()
    assert len(questions) == len(types) == 300
    assert all("[" in q.split("\t")[0] for q in questions)
