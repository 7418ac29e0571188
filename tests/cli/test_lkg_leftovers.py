"""Issue 34 item 8: what a failed command leaves behind, and what it says once. A failed
`lkg build` leaves no store (which `lkg query` read as an empty one, exit 0) and never
removes or rewrites a file the user had; `lkg query` on a file that is not an LKG store
is an error naming it; `solve --program` names an error kind once; `kg build` errors are
not preceded by a blank line."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.llm.base import LLMTransportError
from kgreason.llm.testing import ScriptedLLM
from tests.cli.support import isolate_env, one_error_line
from tests.lkg.test_pipeline_fixtures import (
    HORN_CONTEXT,
    HORN_EXTRACTION,
    SCHOLARSHIP_CONTEXT,
    js,
)

runner = CliRunner()


@pytest.fixture(autouse=True)
def env(monkeypatch, tmp_path) -> None:
    isolate_env(monkeypatch, tmp_path)


def _docs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(HORN_CONTEXT)
    b.write_text(SCHOLARSHIP_CONTEXT)
    return a, b


def _llm(monkeypatch, *, fail_on: str | None = None) -> None:
    """An LLM that extracts HORN_EXTRACTION, or fails for the document containing fail_on."""

    def extract(messages):
        if fail_on is not None and fail_on in messages[0]["content"]:
            raise LLMTransportError("endpoint down")
        return js(HORN_EXTRACTION)

    monkeypatch.setattr(
        "kgreason.cli.lkg.make_llm", lambda *a, **k: ScriptedLLM({"lkg_construct": extract})
    )


def _listing(tmp_path: Path) -> set[str]:
    return {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if "cache" not in p.parts}


# ---- lkg build ------------------------------------------------------------------------


@pytest.mark.parametrize("out", ["lkg.sqlite", "new/deeper/store.sqlite"])
def test_a_build_without_an_llm_leaves_nothing(tmp_path: Path, out: str):
    a, _ = _docs(tmp_path)
    before = _listing(tmp_path)
    r = runner.invoke(app, ["lkg", "build", str(a), "--out", out])
    assert "needs an LLM" in one_error_line(r)
    assert _listing(tmp_path) == before  # no empty store, no directories made for it
    r = runner.invoke(app, ["lkg", "query", out, "Is Max sour?"])
    assert "no LKG store" in one_error_line(r)


def test_a_build_whose_every_extraction_failed_leaves_nothing(tmp_path: Path, monkeypatch):
    a, _ = _docs(tmp_path)
    _llm(monkeypatch, fail_on="")
    before = _listing(tmp_path)
    r = runner.invoke(app, ["lkg", "build", str(a), "--out", "s.sqlite"])
    line = one_error_line(r)
    assert "endpoint down" in line and "no store written at s.sqlite" in line
    assert _listing(tmp_path) == before


def test_a_partly_failed_build_keeps_what_was_added(tmp_path: Path, monkeypatch):
    a, b = _docs(tmp_path)
    _llm(monkeypatch, fail_on="Scholarship")
    r = runner.invoke(app, ["lkg", "build", str(a), str(b), "--out", "s.sqlite", "--json"])
    assert r.exit_code == 1 and "1 of 2 document(s) failed" in r.stderr
    assert json.loads(r.stdout)["store"] == "s.sqlite"
    assert [p.name for p in tmp_path.glob("*.sqlite*")] == ["s.sqlite"]  # no temp file
    r = runner.invoke(app, ["lkg", "query", "s.sqlite", "Is Max sour?", "--no-embed", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["query_entities"] == ["Max"]


def test_a_failed_build_into_an_existing_store_keeps_it(tmp_path: Path, monkeypatch):
    a, b = _docs(tmp_path)
    _llm(monkeypatch)
    assert runner.invoke(app, ["lkg", "build", str(a), "--out", "s.sqlite"]).exit_code == 0
    stored = (tmp_path / "s.sqlite").read_bytes()
    monkeypatch.undo()  # no LLM again; the new document needs one
    for k in [k for k in os.environ if k.startswith("OPENAI_")]:
        monkeypatch.delenv(k)
    r = runner.invoke(app, ["lkg", "build", str(b), "--out", "s.sqlite"])
    assert "needs an LLM" in one_error_line(r)
    assert (tmp_path / "s.sqlite").read_bytes() == stored


@pytest.mark.parametrize("kind", ["empty", "sqlite", "text"])
def test_build_never_writes_into_a_file_that_is_not_a_store(tmp_path: Path, monkeypatch, kind):
    a, _ = _docs(tmp_path)
    _llm(monkeypatch)
    target = _not_a_store(tmp_path, kind)
    before = target.read_bytes()
    r = runner.invoke(app, ["lkg", "build", str(a), "--out", str(target)])
    line = one_error_line(r)
    assert str(target) in line and "not an LKG store" in line
    assert target.read_bytes() == before


# ---- lkg query on what is not a store -------------------------------------------------


def _not_a_store(tmp_path: Path, kind: str) -> Path:
    f = tmp_path / f"{kind}.sqlite"
    if kind == "empty":
        f.write_bytes(b"")
    elif kind == "sqlite":
        db = sqlite3.connect(f)
        db.execute("CREATE TABLE songs(title TEXT)")
        db.commit()
        db.close()
    else:
        f.write_text("just some notes\n" * 50)
    return f


@pytest.mark.parametrize("kind", ["empty", "sqlite", "text"])
def test_query_of_something_that_is_not_a_store_names_it(tmp_path: Path, kind: str):
    f = _not_a_store(tmp_path, kind)
    before = f.read_bytes()
    for argv in (["query", str(f), "Is Max sour?"], ["delete", str(f), "abc"]):
        line = one_error_line(runner.invoke(app, ["lkg", *argv]))
        assert str(f) in line and "not an LKG store" in line
        assert "lkg build" not in line  # building there would be refused too
    assert f.read_bytes() == before  # not given the schema on the way


# ---- solve, kg build ------------------------------------------------------------------


def test_a_broken_smtlib_program_names_its_error_once(tmp_path: Path):
    bad = tmp_path / "bad.smt2"
    bad.write_text("(declare-const x Int)\n(assert (> x")
    r = runner.invoke(app, ["solve", "--program", str(bad)])
    line = one_error_line(r)
    assert line.startswith(f"error: {bad}: parse_error: ") and line.count("parse_error") == 1
    assert "status: parse_error" in r.stdout  # the computed result is still shown
    assert "missing ')'" not in r.stdout  # the error itself only on its stderr line


def test_kg_build_errors_are_not_preceded_by_a_blank_line(tmp_path: Path):
    kb = tmp_path / "kb.tsv"
    kb.write_text("Alpha\tr\n")
    r = runner.invoke(app, ["kg", "build", str(kb), "--out", str(tmp_path / "st")])
    assert r.exit_code == 1 and r.stderr.startswith("error: "), repr(r.stderr)
    assert r.stderr.count("\n") == 1
