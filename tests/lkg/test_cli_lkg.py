import json
from pathlib import Path

import pytest
from tests.lkg.test_pipeline_fixtures import (
    HORN_CONTEXT,
    HORN_EXTRACTION,
    HORN_PROGRAM,
    SCHOLARSHIP_CONTEXT,
    SCHOLARSHIP_EXTRACTION,
    fenced,
    js,
)
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.llm.testing import ScriptedLLM

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("cli_no_llm_env")  # tests/lkg/conftest.py


def test_build_query_delete(tmp_path: Path, monkeypatch):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(SCHOLARSHIP_CONTEXT)
    b.write_text(HORN_CONTEXT)
    calls: list[ScriptedLLM] = []

    def fake_llm(*args, **kwargs):
        llm = ScriptedLLM(
            {
                "lkg_construct": lambda m: js(
                    HORN_EXTRACTION if "yumpus" in m[0]["content"] else SCHOLARSHIP_EXTRACTION
                ),
                "*": lambda m: "[]",
                "route": lambda m: "PYKE",
                "codegen": lambda m: fenced(HORN_PROGRAM),
            }
        )
        calls.append(llm)
        return llm

    monkeypatch.setattr("kgreason.cli.lkg.make_llm", fake_llm)
    store = tmp_path / "store"
    r = runner.invoke(app, ["lkg", "build", str(a), str(b), "--out", str(store), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [d["status"] for d in out["documents"]] == ["added", "added"]
    assert out["counts"]["rule"] == 5 and out["counts"]["documents"] == 2
    # idempotent: nothing new, no LLM built at all
    r = runner.invoke(app, ["lkg", "build", str(a), "--out", str(store), "--json"])
    assert json.loads(r.stdout)["documents"][0]["status"] == "unchanged"
    assert len(calls) == 1

    # query with no LLM: deterministic entity matching, hull, no pruning
    r = runner.invoke(app, ["lkg", "query", str(store), "Is Max sour?", "--no-embed", "--json"])
    assert r.exit_code == 0, r.output
    sub = json.loads(r.stdout)
    assert sub["query_entities"] == ["Max"] and sub["pruned"] is None
    texts = {n["raw_text"] for n in sub["nodes"]}
    assert "Every yumpus is a dumpus." in texts
    assert not any("Scholarship" in t for t in texts)
    r = runner.invoke(app, ["lkg", "query", str(store), "Is Max sour?", "--no-embed"])
    assert "[rule] Every yumpus is a dumpus." in r.stdout

    q = "Is the following statement true or false? Max is sour."
    r = runner.invoke(app, ["lkg", "query", str(store), q, "--solve", "--no-embed", "--json"])
    assert r.exit_code == 0, r.output
    solved = json.loads(r.stdout)
    assert (solved["verdict"], solved["route"]["route"]) == ("False", "horn")
    assert "lkg_construct" not in solved["usage"]  # the stored graph was used

    doc_b = out["documents"][1]["doc_id"]
    r = runner.invoke(app, ["lkg", "delete", str(store), doc_b, "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["counts"]["rule"] == 2
    r = runner.invoke(app, ["lkg", "delete", str(store), doc_b])
    assert r.exit_code == 1 and doc_b in r.stderr


def test_build_and_query_need_things(tmp_path: Path):
    a = tmp_path / "a.txt"
    a.write_text("Alice is a cat.")
    r = runner.invoke(app, ["lkg", "build", str(a), "--out", str(tmp_path / "s")])
    assert r.exit_code == 1 and "needs an LLM" in r.stderr and "extracts" in r.stderr
    r = runner.invoke(app, ["lkg", "query", str(tmp_path / "nope"), "q"])
    assert r.exit_code == 1 and "no LKG store" in r.stderr
    r = runner.invoke(
        app, ["lkg", "build", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "s")]
    )
    assert r.exit_code == 1 and "missing.txt" in r.stderr
