import json
from pathlib import Path

import pytest
from tests.lkg.test_pipeline_fixtures import (
    ARLSAT_OPTIONS,
    ARLSAT_QUESTION,
    ARLSAT_SMT,
    HORN_CONTEXT,
    HORN_EXTRACTION,
    HORN_OPTIONS,
    HORN_PROGRAM,
    HORN_QUESTION,
    JAMIE_FOL,
    fenced,
    js,
)
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.llm.testing import ScriptedLLM

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("cli_no_llm_env")  # tests/lkg/conftest.py


def _file(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("name", "text", "args", "route", "verdict"),
    [
        (
            "p.smt2",
            ARLSAT_SMT,
            ["--question", ARLSAT_QUESTION, "--options", json.dumps(ARLSAT_OPTIONS)],
            "z3",
            "B",
        ),
        ("p.fol", JAMIE_FOL, [], "prover9", "Unknown"),
        (
            "p.rules",
            HORN_PROGRAM,
            ["--question", HORN_QUESTION, "--options", "A) True", "--options", "B) False"],
            "horn",
            "B",
        ),
    ],
)
def test_program_runs_without_llm(tmp_path, name, text, args, route, verdict):
    r = runner.invoke(
        app, ["solve", "--program", str(_file(tmp_path, name, text)), *args, "--json"]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    letter_or_value = out["answer"] or out["verdict"]
    assert (out["route"], letter_or_value) == (route, verdict)


def test_program_errors_are_one_line(tmp_path):
    r = runner.invoke(app, ["solve", "--program", str(_file(tmp_path, "x.txt", "hello world"))])
    assert r.exit_code == 1 and "not recognised" in r.stderr
    r = runner.invoke(app, ["solve", "--program", str(tmp_path / "missing.smt2")])
    assert r.exit_code == 1 and "missing.smt2" in r.stderr
    r = runner.invoke(app, ["solve", "--program", str(_file(tmp_path, "b.smt2", "(assert"))])
    assert r.exit_code == 1 and "parse_error" in r.stdout


def test_context_without_llm_says_so(tmp_path):
    ctx = _file(tmp_path, "c.txt", HORN_CONTEXT)
    r = runner.invoke(app, ["solve", "--context", str(ctx), "--question", HORN_QUESTION])
    assert r.exit_code == 1
    assert "needs an LLM" in r.stderr and "--program" in r.stderr
    r = runner.invoke(app, ["solve"])
    assert r.exit_code == 1 and "exactly one of" in r.stderr


def _scripted():
    def codegen(messages):
        prompt = messages[0]["content"]
        if "Lola" in prompt:
            return "I do not know."
        return fenced(HORN_PROGRAM)

    return ScriptedLLM(
        {
            "lkg_construct": lambda m: js(HORN_EXTRACTION),
            "query_entities": lambda m: "[]",
            "prune": lambda m: "[]",
            "route": lambda m: "PYKE",
            "codegen": codegen,
            "repair": lambda m: "Still no program.",
        }
    )


def test_problems_batch_with_accuracy(tmp_path, monkeypatch):
    monkeypatch.setattr("kgreason.cli.solve.make_llm", lambda *a, **k: _scripted())
    problems = [
        {"id": "ok", "context": HORN_CONTEXT, "question": HORN_QUESTION, "options": HORN_OPTIONS, "answer": "B"},
        {"id": "wrong-gold", "context": HORN_CONTEXT, "question": HORN_QUESTION, "options": HORN_OPTIONS, "answer": "A"},
        {"id": "no-question", "context": HORN_CONTEXT},
        {"id": "no-program", "context": "Lola is a cat.", "question": "Is Lola a cat? True or false?",
         "options": HORN_OPTIONS, "answer": "A"},
        "not even an object",
    ]  # fmt: skip
    f = _file(tmp_path, "probs.json", json.dumps(problems))
    out = tmp_path / "res.jsonl"
    r = runner.invoke(
        app, ["solve", "--problems", str(f), "--no-embed", "--out", str(out), "--json"]
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    by_id = {x["id"]: x for x in data["results"]}
    assert by_id["ok"]["correct"] is True and by_id["wrong-gold"]["correct"] is False
    assert by_id["no-question"]["status"] == "error" and "question" in by_id["no-question"]["error"]
    assert by_id["no-program"]["status"] == "unsolved" and by_id["no-program"]["correct"] is False
    assert by_id["4"]["status"] == "error"
    s = data["summary"]
    assert (s["problems"], s["graded"], s["correct"]) == (5, 3, 1)
    assert s["accuracy"] == pytest.approx(1 / 3)
    assert len(out.read_text().splitlines()) == 5
    text = runner.invoke(app, ["solve", "--problems", str(f), "--no-embed", "--limit", "2"])
    assert "accuracy 50.0% (1/2)" in text.stdout
    many = runner.invoke(
        app, ["solve", "--problems", str(f), "--no-embed", "--concurrency", "3", "--json"]
    )
    again = json.loads(many.stdout)
    assert [x["id"] for x in again["results"]] == [
        "ok",
        "wrong-gold",
        "no-question",
        "no-program",
        "4",
    ]
    assert again["summary"] == data["summary"]


def test_problems_file_errors(tmp_path, monkeypatch):
    monkeypatch.setattr("kgreason.cli.solve.make_llm", lambda *a, **k: _scripted())
    bad = _file(tmp_path, "bad.json", '{"id": 1,\n "context": }')
    r = runner.invoke(app, ["solve", "--problems", str(bad)])
    assert r.exit_code == 1 and "line 2" in r.stderr


def test_context_with_llm(tmp_path, monkeypatch):
    monkeypatch.setattr("kgreason.cli.solve.make_llm", lambda *a, **k: _scripted())
    ctx = _file(tmp_path, "c.txt", HORN_CONTEXT)
    args = ["solve", "--context", str(ctx), "--question", HORN_QUESTION, "--no-embed"]
    r = runner.invoke(app, [*args, "--options", "A) True", "--options", "B) False"])
    assert r.exit_code == 0 and "verdict: B (solved)" in r.stdout
    assert "route: horn (llm)" in r.stdout


def test_program_text_output_shows_the_evidence(tmp_path):
    smt = "(declare-const x Int)\n(assert (> x 2))\n(assert (< x 4))\n(check-sat)\n"
    r = runner.invoke(app, ["solve", "--program", str(_file(tmp_path, "m.smt2", smt))])
    assert r.exit_code == 0, r.output
    assert "verdict: sat" in r.output and "model: x = 3" in r.output
    r = runner.invoke(
        app,
        [
            "solve",
            "--program",
            str(_file(tmp_path, "h.txt", HORN_PROGRAM)),
            "--dataset",
            "ProntoQA",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "proof:" in r.output and "[fact]" in r.output
