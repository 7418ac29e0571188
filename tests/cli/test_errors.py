"""The CLI's error contract, command by command: bad input ends with exactly one line on
stderr (`error: ...`) and a non-zero exit, with nothing on stdout; `-v` adds the detail.
Usage errors and unexpected exceptions keep the same shape (no rich panels or tracebacks)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from tests.cli.support import isolate_env
from tests.pog.test_e2e_nijmegen import FIXTURE

runner = CliRunner()


@pytest.fixture(autouse=True)
def env(monkeypatch, tmp_path) -> None:
    isolate_env(monkeypatch, tmp_path)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kg") / "nijmegen"
    r = runner.invoke(app, ["kg", "build", str(FIXTURE), "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    return out


def one_error_line(r, code: int = 1) -> str:
    """The single stderr line of a failed command (stdout empty)."""
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: ")
    assert r.stdout == "", r.stdout
    return lines[0]


def write(path: Path, text: str) -> Path:
    path.write_text(text, "utf-8")
    return path


CASES = {
    "ask: empty question": (["ask", "  "], "question is empty"),
    "doctor: unknown section": (["doctor", "--section", "gpu"], "unknown doctor section 'gpu'"),
    "config: bad file": (["--config", "missing.toml", "config"], "missing.toml"),
    "kg build: missing file": (["kg", "build", "nope.tsv", "--out", "s"], "nope.tsv"),
    "kg info: not a store": (["kg", "info", "."], "not a kgreason store"),
    "solve: no input": (["solve"], "exactly one of"),
    "solve: no LLM": (["solve", "--context", "ctx.txt", "--question", "q"], "needs an LLM"),
    "lkg build: missing document": (["lkg", "build", "nope.txt", "--out", "l"], "nope.txt"),
    "lkg query: no store": (["lkg", "query", "nolkg", "q"], "no LKG store at nolkg"),
    "lkg delete: no store": (["lkg", "delete", "nolkg", "d1"], "no LKG store at nolkg"),
    "eval: unknown dataset": (["eval", "nosuch"], "unknown dataset 'nosuch'"),
    "eval: unknown method": (["eval", "metaqa", "--method", "magic"], "unknown method 'magic'"),
    "report: not a run": (["report", "."], "not a run directory"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_stderr_line(case: str, tmp_path: Path) -> None:
    args, needle = CASES[case]
    write(tmp_path / "ctx.txt", "Max is a cat.")
    line = one_error_line(runner.invoke(app, args))
    assert needle in line


def test_bad_setting_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("KGREASON_POG__W_MAX", "three")
    line = one_error_line(runner.invoke(app, ["config"]))
    assert "pog.w_max" in line and "KGREASON_POG__W_MAX" in line


def test_unknown_entity_prints_nothing_on_stdout(store: Path) -> None:
    r = runner.invoke(app, ["ask", "who directed [Zorblax the Unfilmable]", "--kg", str(store)])
    line = one_error_line(r)
    assert "unknown entity" in line and "Zorblax the Unfilmable" in line


def test_unknown_entity_json_keeps_the_result_and_still_one_error_line(store: Path) -> None:
    import json

    r = runner.invoke(app, ["ask", "[Zorblax the Unfilmable]?", "--kg", str(store), "--json"])
    assert r.exit_code == 1 and len(r.stderr.splitlines()) == 1
    data = json.loads(r.stdout)
    assert data["ok"] is False and data["error_kind"] == "unknown-entity"


def test_markup_like_text_is_printed_as_typed(tmp_path: Path) -> None:
    line = one_error_line(runner.invoke(app, ["kg", "info", "[bold]not-a-store[/]"]))
    assert "[bold]not-a-store[/]" in line


@pytest.mark.parametrize(
    "args",
    [
        ["ask", "--bogus", "q"],
        ["kg", "build"],
        ["solve", "--limit", "many"],
        ["nosuchcommand"],
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str]) -> None:
    line = one_error_line(runner.invoke(app, args), code=2)
    assert "--help" in line  # points to the help instead of printing a usage panel


def test_unexpected_exception_is_one_line_and_v_shows_the_traceback(monkeypatch) -> None:
    import kgreason.cli.config_cmd as config_cmd

    def broken(*a, **k):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(config_cmd, "flatten_keys", broken)
    line = one_error_line(runner.invoke(app, ["config"]))
    assert "RuntimeError: boom second line" in line and "config" in line
    r = runner.invoke(app, ["-v", "config"])
    assert r.exit_code == 1
    first, *rest = r.stderr.splitlines()
    assert first.startswith("error: RuntimeError: boom")
    assert any("Traceback" in x for x in rest) and "broken" in r.stderr


def test_fail_with_v_shows_the_handled_exception(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.json", "[{")
    r = runner.invoke(app, ["solve", "--problems", str(bad)])
    assert "not JSON" in one_error_line(r)
    r = runner.invoke(app, ["-v", "solve", "--problems", str(bad)])
    assert r.exit_code == 1 and len(r.stderr.splitlines()) > 1
    assert "JSONDecodeError" in r.stderr


@pytest.mark.parametrize(
    "args", [["--help"], ["ask", "--help"], ["solve", "--help"], ["kg", "build", "--help"]]
)
def test_boolean_flags_show_as_flags_in_help(args: list[str]) -> None:
    r = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.stderr
    assert "--json" in r.stdout
    assert "<bool>" not in r.stdout and "<int>" not in r.stdout.split("--verbose")[-1][:40]


def test_no_arguments_prints_the_help_not_an_error() -> None:
    r = runner.invoke(app, ["kg"])
    assert r.exit_code == 2 and "build" in r.stdout and r.stderr == ""


def test_a_failed_solver_program_keeps_its_output_and_ends_with_one_line(tmp_path: Path):
    bad = write(tmp_path / "b.smt2", "(assert")
    r = runner.invoke(app, ["solve", "--program", str(bad)])
    assert r.exit_code == 1 and "parse_error" in r.stdout  # the computed result is kept
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: parse_error")
