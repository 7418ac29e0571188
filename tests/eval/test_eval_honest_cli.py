"""Issue 34 end to end on a synthetic KG: `kgreason train ranker --limit N` records the N
questions it saw in its artefact, and `kgreason eval --ranker` with that artefact leaves
them out (or, with --include-trained, keeps them and warns). No shared data needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.pog.ranker_synth import synth_questions, synth_triples
from typer.testing import CliRunner

from kgreason.cli import app

runner = CliRunner()
TRAINED = 200  # `train ranker --limit`: the first 200 of the 640 synthetic questions


@pytest.fixture(autouse=True)
def no_llm(monkeypatch) -> None:
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "KGREASON_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.delenv("KGREASON_DATA_DIR", raising=False)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(store, data dir, ranker artefact trained on the first TRAINED questions)."""
    d = tmp_path_factory.mktemp("honest")
    tsv = d / "kb.tsv"
    tsv.write_text("".join(f"{t.head}\t{t.relation}\t{t.tail}\n" for t in synth_triples()))
    env = {"KGREASON_EMBED__BACKEND": "static"}
    r = runner.invoke(app, ["kg", "build", str(tsv), "--out", str(d / "store")], env=env)
    assert r.exit_code == 0, r.output
    f = d / "data" / "kgqa" / "metaqa" / "1-hop" / "dev.txt"
    f.parent.mkdir(parents=True)
    f.write_text("".join(f"{q.text}\t{'|'.join(q.gold)}\n" for q, _ in synth_questions()))
    args = ["train", "ranker", "--kg", str(d / "store"), "--data", "metaqa"]
    args += ["--data-dir", str(d / "data")]
    args += ["--hops", "1", "--limit", str(TRAINED), "--out", str(d / "ranker"), "--epochs", "2"]
    r = runner.invoke(app, args, env=env)
    assert r.exit_code == 0, r.output
    return d / "store", d / "data", d / "ranker"


def _eval(setup: tuple[Path, Path, Path], out: Path, *extra: str) -> dict:
    store, data, ranker = setup
    args = ["eval", "metaqa", "--method", "llm-free", "--kg", str(store), "--data-dir", str(data)]
    args += ["--ranker", str(ranker), "--out", str(out), "--json", *extra]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)["headline"]


def test_train_records_the_questions_it_saw(setup) -> None:
    doc = json.loads((setup[2] / "training_questions.json").read_text("utf-8"))
    spec = json.loads((setup[2] / "ranker.json").read_text("utf-8"))
    assert doc["questions"] == TRAINED == spec["training"]["questions"]
    assert doc["fingerprint"] == spec["training"]["fingerprint"]


def test_eval_leaves_the_ranker_training_questions_out(setup, tmp_path: Path) -> None:
    h = _eval(setup, tmp_path / "held", "--limit", "10")
    rows = [json.loads(x) for x in (tmp_path / "held" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 10  # ten questions after exclusion, not ten minus the overlap
    assert all(int(x["id"].rsplit("-", 1)[1]) > TRAINED for x in rows)
    assert h["trained_note"].startswith(f"excluded {TRAINED} questions: {TRAINED} the ranker")
    assert h["run"]["ranker"].startswith(f"path ranker {setup[2]} (")
    assert "trained on metaqa, dev, 1-hop, first 200 per hop" in h["run"]["ranker"]


def test_include_trained_keeps_them_and_warns(setup, tmp_path: Path) -> None:
    h = _eval(setup, tmp_path / "kept", "--limit", "10", "--include-trained")
    assert h["trained_warning"] and h["trained_note"].startswith("WARNING: 10 of 10 questions")
    cfg = json.loads((tmp_path / "kept" / "config.json").read_text("utf-8"))
    assert cfg["trained_questions"]["policy"] == "include"
    # resuming it under the default (exclusion) would mix the two: refused in one line
    store, data, ranker = setup
    args = ["eval", "metaqa", "--method", "llm-free", "--kg", str(store), "--data-dir", str(data)]
    args += ["--ranker", str(ranker), "--out", str(tmp_path / "kept"), "--resume"]
    r = runner.invoke(app, args)
    assert r.exit_code != 0 and "kept the questions the ranker was trained on" in r.stderr


def test_an_artefact_without_a_record_warns_that_overlap_is_unchecked(
    setup, tmp_path: Path
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("ranker.json", "weights.safetensors"):
        (bare / name).write_bytes((setup[2] / name).read_bytes())
    h = _eval((setup[0], setup[1], bare), tmp_path / "run", "--limit", "3")
    assert h["trained_warning"] and "not checked" in h["trained_note"]
