"""Logic-LM ProntoQA / ProofWriter rule programs on the clingo Horn engine."""

from __future__ import annotations

import json

import pytest
from tests.data import SMALL_DATA

from kgreason.lkg.logiclm.pyke import parse_atom, parse_pyke_program, run_logiclm_rules
from kgreason.lkg.solvers import Atom, ProgramFormatError

LOGIC = SMALL_DATA / "logic"  # vendored slices (tests/data)

PROGRAM = """Predicates:
Cold($x, bool) ::: Is x cold?
Facts:
Cold(Bob, True) ::: Bob is cold.
Quiet(Bob, True) ::: Bob is quiet.
Kind(Dave, False) ::: Dave is not kind.
Quiet($x, True) && Cold($x, True) >>> Smart($x, True) ::: a rule under Facts:
Wumpus($x, True) ::: skipped: facts with variables
Rules:
Smart($x, True) >>> Red($x, False) ::: Smart things are not red.
Query:
{query}
"""


def test_parse_program():
    prog = parse_pyke_program(PROGRAM.format(query="Red(Bob, False)"))
    assert Atom("Kind", ("Dave",), negated=True) in prog.facts
    assert len(prog.facts) == 3 and len(prog.rules) == 2
    assert prog.query == Atom("Red", ("Bob",), negated=True)
    assert any("rule found under Facts:" in n for n in prog.notes)
    assert any("has variables: skipped" in n for n in prog.notes)


@pytest.mark.parametrize(
    ("query", "proofwriter", "prontoqa"),
    [
        ("Red(Bob, False)", "A", "A"),
        ("Red(Bob, True)", "B", "B"),
        ("Smart(Dave, True)", "C", "B"),
        ("Kind(Dave, False)", "A", "A"),
    ],
)
def test_answer_letters(query, proofwriter, prontoqa):
    text = PROGRAM.format(query=query)
    out = run_logiclm_rules(text, "ProofWriter")
    assert out.letter == proofwriter, out.result.describe()
    assert run_logiclm_rules(text, "ProntoQA").letter == prontoqa


def test_derivation_is_returned():
    out = run_logiclm_rules(PROGRAM.format(query="Red(Bob, False)"), "ProofWriter")
    proof = out.result.proof or ""
    assert proof.splitlines()[0].startswith("¬Red(Bob)  [rule 2")
    assert "Smart(Bob)  [rule 1" in proof and "Cold(Bob)  [fact]" in proof


def test_negation_variants_flip_the_value():
    notes: list[str] = []
    assert parse_atom("!Green($x, True)", notes, where="r") == Atom("Green", ("$x",), negated=True)
    assert parse_atom("Not(Blue(Gary), True)", notes, where="r") == Atom(
        "Blue", ("Gary",), negated=True
    )
    assert parse_atom("Not(Round($x, True))", notes, where="r") == Atom(
        "Round", ("$x",), negated=True
    )
    assert parse_atom("Sees(cat, rabbit)", notes, where="r") == Atom("Sees", ("cat", "rabbit"))
    assert len(notes) == 3


def test_strict_mode_rejects_non_pyke_negation():
    text = PROGRAM.replace("Rules:\n", "Rules:\n!Cold($x, True) >>> Happy($x, True)\n")
    assert run_logiclm_rules(text.format(query="Red(Bob, False)"), "ProofWriter").letter == "A"
    out = run_logiclm_rules(text.format(query="Red(Bob, False)"), "ProofWriter", strict=True)
    assert out.letter is None and out.result.details["kind"] == "nonstandard_negation"


def test_inconsistency_resolves_to_false_like_logiclm():
    text = PROGRAM.replace("Rules:\n", "Rules:\nCold($x, True) >>> Red($x, True)\n")
    assert run_logiclm_rules(text.format(query="Red(Bob, True)"), "ProofWriter").letter == "B"
    out = run_logiclm_rules(text.format(query="Red(Bob, False)"), "ProofWriter")
    assert out.letter == "A" and any("False wins" in n for n in out.notes)


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("Smart(Fiona, Unknown)", "unsupported_value"),
        ("Bob is smart", "bad_atom"),
        ("Smart($x, True)", "bad_query"),
    ],
)
def test_bad_programs_are_parse_errors(query, kind):
    out = run_logiclm_rules(PROGRAM.format(query=query), "ProofWriter")
    assert out.letter is None and out.result.status == "parse_error"
    assert out.result.details["kind"] == kind
    with pytest.raises(ProgramFormatError):
        parse_pyke_program(PROGRAM.format(query=query))


@pytest.mark.parametrize("dataset", ["ProntoQA", "ProofWriter"])
def test_real_logiclm_programs(dataset):
    path = LOGIC / "logiclm-programs" / f"{dataset}_dev_text-davinci-003.json"
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    records = json.loads(path.read_text())[:12]
    letters = [run_logiclm_rules(r["raw_logic_programs"][0], dataset).letter for r in records]
    assert all(letter is not None for letter in letters)
    correct = sum(letter == r["answer"] for letter, r in zip(letters, records, strict=True))
    assert correct >= 8  # text-davinci-003's programs are mostly right (Logic-LM: ~85% / ~70%)
