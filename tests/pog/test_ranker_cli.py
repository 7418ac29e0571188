"""`kgreason train ranker` and `ask --ranker` through the real CLI, on a store built from the
synthetic KG and MetaQA-format questions in a data directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.pog.ranker_synth import TEMPLATES, synth_questions, synth_triples
from typer.testing import CliRunner

from kgreason.cli import app

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("llm_free_env")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("kg")
    tsv = d / "kb.tsv"
    tsv.write_text("".join(f"{t.head}\t{t.relation}\t{t.tail}\n" for t in synth_triples()))
    r = runner.invoke(app, ["kg", "build", str(tsv), "--out", str(d / "store")])
    assert r.exit_code == 0, r.output
    return d / "store"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data")
    f = root / "kgqa" / "metaqa" / "1-hop" / "dev.txt"
    f.parent.mkdir(parents=True)
    f.write_text("".join(f"{q.text}\t{'|'.join(q.gold)}\n" for q, _ in synth_questions()))
    return root


@pytest.fixture(scope="module")
def artefact(store, data_dir, tmp_path_factory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("art") / "ranker"
    args = ["--json", "train", "ranker", "--kg", str(store), "--data", "metaqa"]
    args += ["--data-dir", str(data_dir)]
    args += ["--hops", "1", "--out", str(out), "--epochs", "4", "--valid-fraction", "0.25"]
    r = runner.invoke(app, args, env={"KGREASON_EMBED__BACKEND": "static"})
    assert r.exit_code == 0, r.output
    return out, json.loads(r.stdout)


def test_train_writes_an_artefact_with_provenance_and_a_validation_report(artefact, store):
    out, report = artefact
    spec = json.loads((out / "ranker.json").read_text())
    assert spec["kg"]["name"] == str(store) and len(spec["kg"]["fingerprint"]) >= 16
    assert sorted(spec["kg"]["relations"]) == ["p1", "p2", "p3", "p4"]
    assert spec["training"]["questions"] == len(synth_questions())
    assert spec["training"]["with_positive_path"] == len(synth_questions())
    assert len(spec["training"]["fingerprint"]) == 64 and spec["training"]["seed"] == 0
    assert set(spec["validation"]) == {"linear", "mlp"} and spec["embedder"] == {
        "backend": "static"
    }
    assert report["model"]["kind"] in ("linear", "mlp") and (out / "weights.safetensors").is_file()


def test_ask_with_the_ranker_answers_and_shows_the_path_as_evidence(artefact, store):
    out, _ = artefact
    q = TEMPLATES["director"][0].format(f="film5")
    r = runner.invoke(app, ["ask", q, "--kg", str(store), "--ranker", str(out)])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    answer = next(ln for ln in lines if ln.startswith("Answer"))
    assert "director5" in answer and "confidence" in answer
    assert "learned path ranker" in r.stdout
    evidence = r.stdout[r.stdout.index("Reasoning paths") :]
    assert "{film5} -> p1 -> {director5}" in evidence.splitlines()[1]


def test_a_ranker_from_another_kg_warns_and_a_missing_one_fails_in_one_line(artefact, tmp_path):
    out, _ = artefact
    tsv = tmp_path / "other.tsv"
    tsv.write_text("film5\tp1\tdirector5\nfilm5\tdirected_by\tsomeone\n")
    assert (
        runner.invoke(app, ["kg", "build", str(tsv), "--out", str(tmp_path / "o")]).exit_code == 0
    )
    r = runner.invoke(
        app, ["ask", "who directed [film5]", "--kg", str(tmp_path / "o"), "--ranker", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert "trained on KG" in r.stderr and "directed_by" in r.stderr
    bad = runner.invoke(app, ["ask", "who directed [film5]", "--ranker", str(tmp_path / "nope")])
    assert bad.exit_code != 0
    assert bad.stderr.strip().count("\n") == 0 and "not a ranker artefact" in bad.stderr


def test_train_rejects_bad_options_in_one_line(tmp_path):
    r = runner.invoke(app, ["train", "ranker", "--models", "svm", "--out", str(tmp_path / "x")])
    assert r.exit_code != 0 and "unknown model 'svm'" in r.stderr
    r = runner.invoke(app, ["train", "ranker", "--hops", "one", "--out", str(tmp_path / "x")])
    assert r.exit_code != 0 and "--hops" in r.stderr


def test_readme_question_on_the_bundled_kg_answers_with_the_bundled_ranker():
    from kgreason.pog.ranker.factory import bundled_ranker_path

    if not (bundled_ranker_path() / "ranker.json").is_file():
        pytest.fail("the bundled ranker is missing from the package")
    r = runner.invoke(app, ["ask", "who directed [Once Were Warriors]"])
    assert r.exit_code == 0, r.output
    answer = next(ln for ln in r.stdout.splitlines() if ln.startswith("Answer"))
    assert answer.startswith("Answer: Lee Tamahori"), answer
    evidence = r.stdout[r.stdout.index("Reasoning paths") :].splitlines()[1]
    assert "{Once Were Warriors} -> directed_by -> {Lee Tamahori}" in evidence
    assert "not PoG's" in r.stdout


def test_a_supervision_cache_trains_as_the_data_it_holds(store, data_dir, tmp_path):
    """The default --data is label-free, but a cache of MetaQA pairs (as the bundled ranker's
    PROVENANCE.md command uses) must train and be recorded as MetaQA."""
    cache = tmp_path / "sup.npz"
    base = ["--json", "train", "ranker", "--kg", str(store), "--hops", "1", "--epochs", "1"]
    first = [*base, "--data", "metaqa", "--data-dir", str(data_dir), "--supervision", str(cache)]
    r = runner.invoke(app, [*first, "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output and cache.is_file()
    r = runner.invoke(app, [*base, "--supervision", str(cache), "--out", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    tr = json.loads((tmp_path / "b" / "ranker.json").read_text())["training"]
    assert tr["dataset"] == "metaqa" and tr["label_free"] is False and tr["split"] == "dev"
    assert tr["config"]["pca_dim"] == 24 and tr["hops"] == [1]
