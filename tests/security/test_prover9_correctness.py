"""Prover9 answers: a found proof is never read as Unknown, an endless search is a
timeout, and two threads never race on the binary.

Before the fix: auto-denials made Prover9 exit `sos_empty` after printing the proof, read
as Unknown (FOLIO_dev_60: `State(missoula, montana)` is a premise conjunct and the
conclusion, answered Unknown); an endless search flooded the output and was reported as
an output limit; with 2 workers, copying the binary per run raced with the other
thread's exec: `Text file busy`."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kgreason.lkg.programs import run_program
from kgreason.lkg.solvers import Prover9Runner, Sandbox, SolverLimits, run_prover9

FIXTURES = json.loads((Path(__file__).parent / "fixtures/folio_auto_denials.json").read_text())
GROUP = [
    "all x all y all z (f(f(x,y),z) = f(x,f(y,z)))",
    "all x (f(x,e) = x)",
    "all x exists y (f(x,y) = e)",
]


def test_a_premise_conjunct_is_proved_true(sandbox):
    res = run_prover9(
        ["In(missoula, montana) & City(missoula)", "-In(pierre, montana)"],
        "In(missoula, montana)",
        sandbox=sandbox,
    )
    assert res.ok and res.verdict == "proved" and res.answer == "True"
    assert "clear(auto_denials)" not in res.program  # our preamble, not the user's text


@pytest.mark.parametrize("record", FIXTURES, ids=[r["id"] for r in FIXTURES])
def test_logiclm_folio_records_that_auto_denials_lost(sandbox, record):
    out = run_program(record["program"], "fol", dataset="FOLIO", sandbox=sandbox)
    assert out.ok and out.verdict == "True" and out.answer == record["answer"] == "A"


def test_an_endless_search_is_a_timeout_not_an_output_limit():
    box = Sandbox(SolverLimits(cpu_s=2, memory_mb=512, wall_s=30), max_output=1 << 20)
    res = Prover9Runner(box).prove(GROUP, "exists x exists y (f(x,y) != f(y,x))")
    assert res.status == "timeout" and res.error_kind == "cpu_limit", res.error


def test_two_threads_never_hit_text_file_busy():
    box = Sandbox(SolverLimits(cpu_s=5, memory_mb=512, wall_s=60))
    runner = Prover9Runner(box)

    def one(i: int) -> str:
        res = runner.decide([f"P(c{i})", "all x (P(x) -> Q(x))"], f"Q(c{i})")
        return f"{res.status} {res.answer} {res.error or ''} {res.stderr}"

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(one, range(24)))
    assert not [r for r in results if "busy" in r.lower()]
    assert all(r.startswith("ok True") for r in results), results
