"""`kgreason eval --sample N --seed S`: a seeded random sample, the same on every run and
Python version, recorded in the run config, kept by --resume; `--limit` stays "first N"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.eval.records import Record
from kgreason.eval.sample import sample_indices, sample_records

runner = CliRunner()
IDS = [f"q{i:04d}" for i in range(1000)]


def test_sample_is_pinned_for_seed_0() -> None:
    # pinned: a change in the draw (or in Python's random()) would silently change every
    # sampled run, so it must fail here first
    got = sample_indices(IDS, 5, 0)
    assert got == sample_indices(IDS, 5, 0)
    assert got == [261, 421, 513, 758, 844]


def test_sample_size_order_and_seeds() -> None:
    s = sample_indices(IDS, 100, 0)
    assert len(s) == len(set(s)) == 100 and s == sorted(s)
    assert s != sample_indices(IDS, 100, 1)
    assert sample_indices(IDS, 5000, 0) == list(range(1000))  # min(N, len)
    assert sample_indices(IDS, 0, 0) == []
    with pytest.raises(ValueError, match=">= 0"):
        sample_indices(IDS, -1, 0)


def test_sample_depends_on_ids_not_on_file_order() -> None:
    recs = [Record(id=i, dataset="d", task="kgqa", question=i) for i in IDS]
    a = {r.id for r in sample_records(recs, 50, 7)}
    b = {r.id for r in sample_records(list(reversed(recs)), 50, 7)}
    assert a == b and len(a) == 50
    # the chosen records keep the dataset's order
    got = [r.id for r in sample_records(list(reversed(recs)), 50, 7)]
    assert got == sorted(got, reverse=True)


def _metaqa_dir(tmp: Path, n: int) -> Path:
    """A data directory whose MetaQA 1-hop dev set is the first `n` vendored questions."""
    from tests.data import SMALL_DATA

    src = SMALL_DATA / "kgqa" / "metaqa" / "1-hop"
    dst = tmp / "data" / "kgqa" / "metaqa" / "1-hop"
    dst.mkdir(parents=True)
    for name in ("dev.txt", "qa_dev_qtype.txt"):
        lines = (src / name).read_text("utf-8").splitlines(keepends=True)[:n]
        (dst / name).write_text("".join(lines), "utf-8")
    return tmp / "data"


@pytest.fixture
def env(monkeypatch, tmp_path):
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KGREASON_CONFIG", "KGREASON_DATA_DIR"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _ids(out: Path) -> list[str]:
    return [
        json.loads(line)["id"] for line in (out / "results.jsonl").read_text("utf-8").splitlines()
    ]


def test_eval_sample_is_recorded_and_resume_keeps_it(env: Path) -> None:
    data = _metaqa_dir(env, 40)
    base = ["eval", "metaqa", "--method", "llm-free", "--data-dir", str(data), "--include-trained"]
    args = [*base, "--sample", "6", "--seed", "3", "--limit", "4", "--out", "s"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.stderr
    cfg = json.loads((env / "s" / "config.json").read_text())
    assert (cfg["sample"], cfg["seed"], cfg["limit"]) == (6, 3, 4)
    first = _ids(env / "s")
    assert len(first) == 4
    # --limit takes the first of the sample; the full sample extends it on --resume
    r = runner.invoke(app, [*base, "--sample", "6", "--seed", "3", "--out", "s", "--resume"])
    assert r.exit_code == 0, r.stderr
    all_ids = _ids(env / "s")
    assert all_ids[:4] == first and len(all_ids) == 6
    # another seed is another sample, and cannot resume this run
    r = runner.invoke(app, [*base, "--sample", "6", "--seed", "4", "--out", "s", "--resume"])
    assert r.exit_code != 0 and "seed" in r.stderr
    # --limit alone stays the first N questions, which the sample is not
    r = runner.invoke(app, [*base, "--limit", "6", "--out", "l"])
    assert r.exit_code == 0, r.stderr
    assert len(_ids(env / "l")) == 6 and _ids(env / "l") != all_ids
    assert "sample" not in json.loads((env / "l" / "config.json").read_text())
