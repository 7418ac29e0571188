"""Issue 34 item 9: every command's and subcommand's --help, rendered as a user sees it.
Option help survives rich markup (`kgreason[sbert]` was printed as `kgreason`), descriptions
end where their sentence ends (a docstring's line break cut `doctor` and `lkg build` in two
in the command lists), and usage lines name arguments as QUESTION, not `{question}`."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer.main
from rich.text import Text
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.cli.errors import one_line_help, unwrapped_help

runner = CliRunner()
#: wide enough that no description wraps: a row that still spans lines was cut
WIDE = {"COLUMNS": "250", "NO_COLOR": "1"}
ENDS = (".", ")", "!", "?", "`")


def _commands() -> Iterator[tuple[list[str], object]]:
    """(argv to the command, click command) for the root, every group and command."""

    def walk(path: list[str], cmd: object) -> Iterator[tuple[list[str], object]]:
        yield path, cmd
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            yield from walk([*path, name], sub)

    yield from walk([], typer.main.get_command(app))


COMMANDS = list(_commands())
IDS = [" ".join(p) or "kgreason" for p, _ in COMMANDS]


def _help(path: list[str]) -> str:
    r = runner.invoke(app, [*path, "--help"], env=WIDE)
    assert r.exit_code == 0, r.output
    return r.stdout


def _panel_rows(text: str, title: str) -> list[str]:
    """The rows of one rich panel (`╭─ Commands ─...`), box characters stripped."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith("╭─ " + title):
            inside = True
        elif inside and line.startswith("╰"):
            break
        elif inside:
            rows.append(line.strip("│ ").rstrip())
    return rows


def test_the_walk_sees_every_command():
    assert {"kgreason", "ask", "doctor", "lkg", "lkg build", "lkg query", "kg build"} <= set(IDS)
    assert len(COMMANDS) > 15


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=IDS)
def test_option_help_survives_rich_markup(path: list[str], cmd):
    text = _help(path)
    flat = " ".join(text.replace("│", " ").split())
    assert not re.search(r"needs kgreason(?!\[)", flat), flat
    for p in getattr(cmd, "params", []):
        h = getattr(p, "help", None)
        if h:  # markup may only remove escapes: every other character is printed
            assert Text.from_markup(h).plain == h.replace("\\[", "["), (p.name, h)


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=IDS)
def test_descriptions_end_where_their_sentence_ends(path: list[str], cmd):
    text = _help(path)
    for row in _panel_rows(text, "Commands"):
        name, _, desc = row.partition(" ")
        assert desc.strip().endswith(ENDS), f"{' '.join(path)} lists {name!r} as {desc!r}"
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.strip().startswith("Usage:")) + 1
    end = next((i for i, x in enumerate(lines) if x.startswith("╭")), len(lines))
    prose = [x.strip() for x in lines[start:end] if x.strip()]
    if getattr(cmd, "help", None):
        assert prose, text
    for line in prose:
        assert line.endswith(ENDS), f"{' '.join(path) or 'kgreason'}: {line!r}"


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=IDS)
def test_usage_names_arguments_without_braces(path: list[str], cmd):
    usage = next(x for x in _help(path).splitlines() if "Usage:" in x)
    assert "{" not in usage and "}" not in usage, usage
    for p in getattr(cmd, "params", []):
        if p.param_type_name == "argument":
            assert (p.name or "").upper() in usage, usage


def test_ask_usage_and_missing_argument_say_question():
    assert "Usage: kgreason ask [OPTIONS] QUESTION" in _help(["ask"])
    r = runner.invoke(app, ["ask"])
    assert r.exit_code == 2 and "Missing argument 'QUESTION'" in r.stderr


def test_embedder_help_names_the_extra_on_every_command_that_has_it():
    for path in (["ask"], ["eval"], ["lkg", "build"], ["lkg", "query"], ["serve"]):
        flat = " ".join(_help(path).replace("│", " ").split())
        assert "needs kgreason[sbert])." in flat, path


def test_help_paragraphs_are_unwrapped_and_first_paragraphs_are_one_line():
    doc = """First sentence that a docstring
    wraps.

    Second paragraph, also
    wrapped.

    \b
    kept  as
    laid out
    """
    assert one_line_help(doc) == "First sentence that a docstring wraps."
    assert unwrapped_help(doc).split("\n\n")[:2] == [
        "First sentence that a docstring wraps.",
        "Second paragraph, also wrapped.",
    ]
    assert unwrapped_help(doc).endswith("\b\nkept  as\nlaid out")
