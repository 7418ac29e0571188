"""MuSiQue's two variants (Trivedi et al., TACL 2022): "answerable" (MuSiQue-Ans) and "full"
(MuSiQue-Full, each question paired with an unanswerable twin whose supporting paragraph
is gone). `eval musique --variant` loads the variant's own file and records it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.llm.fake_server import FakeOpenAIServer
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.eval.datasets import load, variants
from kgreason.eval.loaders import DatasetError


def _rec(qid: str, answerable: bool) -> dict:
    return {
        "id": qid,
        "question": "Who founded the label of X?",
        "answer": "Y",
        "answer_aliases": [],
        "answerable": answerable,
        "paragraphs": [
            {"idx": 0, "title": "X", "paragraph_text": "X is on label Z.", "is_supporting": True},
            {"idx": 1, "title": "Q", "paragraph_text": "unrelated", "is_supporting": False},
        ],
        "question_decomposition": [{}, {}],
    }


def _write(root: Path, name: str, recs: list[dict]) -> None:
    d = root / "multihop" / "musique"
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("".join(json.dumps(r) + "\n" for r in recs))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    _write(tmp_path, "musique_ans_v1.0_dev.jsonl", [_rec("2hop_1", True)])
    _write(tmp_path, "musique_full_v1.0_dev.jsonl", [_rec("2hop_1", True), _rec("2hop_1u", False)])
    return tmp_path


def test_each_variant_loads_its_own_file(root: Path):
    assert variants("musique") == ("answerable", "full")
    assert variants("hotpotqa") == ()
    ans = load("musique", root=root)  # answerable is the default
    assert [r.id for r in ans.records] == ["2hop_1"]
    full = load("musique", root=root, variant="full")
    assert [(r.id, r.answerable) for r in full.records] == [("2hop_1", True), ("2hop_1u", False)]


def test_a_missing_variant_file_is_a_clear_error(tmp_path: Path):
    _write(tmp_path, "musique_ans_v1.0_dev.jsonl", [_rec("2hop_1", True)])
    with pytest.raises(DatasetError) as e:
        load("musique", root=tmp_path, variant="full")
    msg = str(e.value)
    assert "full variant" in msg and "musique_full_v1.0_dev.jsonl" in msg
    assert "answerable" in msg  # the variant that is there


def test_the_legacy_file_is_the_answerable_variant_and_is_checked(tmp_path: Path):
    _write(tmp_path, "dev.jsonl", [_rec("2hop_1", True)])
    assert [r.id for r in load("musique", root=tmp_path).records] == ["2hop_1"]
    with pytest.raises(DatasetError, match="full variant"):
        load("musique", root=tmp_path, variant="full")
    # a file holding unanswerable questions is not the answerable variant
    _write(tmp_path, "dev.jsonl", [_rec("2hop_1", True), _rec("2hop_1u", False)])
    with pytest.raises(DatasetError, match="unanswerable"):
        load("musique", root=tmp_path)


def test_unknown_variant_or_a_dataset_without_variants(root: Path):
    with pytest.raises(DatasetError, match="answerable, full"):
        load("musique", root=root, variant="ans")
    with pytest.raises(DatasetError, match="no variants"):
        load("hotpotqa", root=root, variant="full")


def test_eval_rejects_a_wrong_variant(root: Path, tmp_path: Path):
    base = ["eval", "musique", "--method", "io", "--data-dir", str(root)]
    bad = CliRunner().invoke(app, [*base, "--variant", "nope", "--out", str(tmp_path / "r")])
    assert bad.exit_code != 0 and "nope" in bad.output and "answerable, full" in bad.output
    other = CliRunner().invoke(app, ["eval", "hotpotqa", "--variant", "full", "--method", "io"])
    assert other.exit_code != 0 and "no variants" in other.output


def test_eval_records_the_variant_in_config_table_and_scores(root: Path, tmp_path: Path):
    server = FakeOpenAIServer().start()
    try:
        server.plan = [("ok", "So the answer is {Y}.") for _ in range(2)]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_"))}
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test",
                   KGREASON_CACHE_DIR=str(tmp_path / "cache"))  # fmt: skip
        out = tmp_path / "run"
        args = ["eval", "musique", "--variant", "full", "--method", "io", "--no-cache",
                "--data-dir", str(root), "--out", str(out)]  # fmt: skip
        res = subprocess.run([sys.executable, "-m", "kgreason", *args, "--json"], env=env,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        assert res.returncode == 0, res.stderr
        table = subprocess.run([sys.executable, "-m", "kgreason", *args[:-2], "--out",
                                str(tmp_path / "run2")], env=env, capture_output=True,
                               text=True, timeout=300)  # fmt: skip
    finally:
        server.close()
    config = json.loads((out / "config.json").read_text())
    assert config["variant"] == "full" and "variant" not in config["defaulted"]
    head = json.loads(res.stdout)["headline"]
    assert head["run"]["variant"] == "full (MuSiQue-Full)"
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [r["answerable"] for r in rows] == [True, False]
    assert set(head["by_answerable"]) == {"answerable", "unanswerable"}
    assert "variant" in table.stdout and "MuSiQue-Full" in table.stdout
