"""Z3 on SMT-LIB programs in the sandbox: verdicts, models, engine errors, refusals, limits."""

from __future__ import annotations

from kgreason.lkg.solvers import Sandbox, SolverLimits, Z3Runner, run_z3

SAT = """
(declare-const x Int)
(declare-const y Int)
(assert (> x 2))
(assert (= y (* 2 x)))
(check-sat)
(get-value (x y))
"""


def test_sat_returns_model_and_values(sandbox):
    res = run_z3(SAT, sandbox=sandbox)
    assert res.ok and res.verdict == "sat"
    assert res.model is not None and int(res.model["y"]) == 2 * int(res.model["x"])
    assert res.values == {"x": res.model["x"], "y": res.model["y"]}
    assert res.details["network_isolated"] == sandbox.isolation().network_isolated


def test_unsat_without_model(sandbox):
    res = run_z3(
        "(declare-const x Int)(assert (> x 2))(assert (< x 1))(check-sat)", sandbox=sandbox
    )
    assert res.ok and res.verdict == "unsat" and res.model is None


def test_unsat_core(sandbox):
    prog = """(set-option :produce-unsat-cores true)
    (declare-const x Int)
    (assert (! (> x 2) :named big))
    (assert (! (< x 1) :named small))
    (assert (! (> x -5) :named loose))
    (check-sat)
    (get-unsat-core)"""
    res = run_z3(prog, sandbox=sandbox)
    assert res.verdict == "unsat"
    assert sorted(res.details["unsat_core"]) == ["big", "small"]


def test_engine_error_message_is_reported(sandbox):
    res = run_z3("(declare-const x Int)(assert (> y 2))(check-sat)", sandbox=sandbox)
    assert res.status == "parse_error" and res.error_kind == "parse_error"
    assert "unknown constant y" in (res.error or "")
    res = run_z3("(declare-const x Int)(assert (> x 2)(check-sat)", sandbox=sandbox)
    assert res.status == "parse_error" and "line 1" in (res.error or "")


def test_file_access_is_refused(sandbox):
    res = run_z3('(include "/etc/passwd")\n(check-sat)', sandbox=sandbox)
    assert res.status == "parse_error" and res.error_kind == "refused"
    assert "include" in (res.error or "")
    res = run_z3('(set-option :regular-output-channel "/tmp/leak.txt")(check-sat)', sandbox=sandbox)
    assert res.error_kind == "refused" and "regular-output-channel" in (res.error or "")


def test_check_options_must_and_could(sandbox):
    base = "(declare-const x Int)(assert (and (> x 2) (< x 5)))"
    options = {"A": "(> x 3)", "B": "(> x 2)", "C": "(= x 10)"}
    runner = Z3Runner(sandbox)
    must = runner.check_options(base, options, "must_be_true")
    assert must.ok and must.answer == "B" and must.details["selected"] == ["B"]
    could = runner.check_options(base, options, "could_be_true")
    assert could.details["selected"] == ["A", "B"] and could.answer is None
    cannot = runner.check_options(base, options, "cannot_be_true")
    assert cannot.answer == "C"
    could_be_false = runner.check_options(base, options, "could_be_false")
    assert could_be_false.details["selected"] == ["A", "C"]
    assert must.details["base"] == "sat"


def test_check_options_flags_an_inconsistent_base(sandbox):
    base = "(declare-const x Int)(assert (> x 2))(assert (< x 0))"
    res = Z3Runner(sandbox).check_options(base, {"A": "(> x 3)", "B": "(= x 1)"})
    assert res.details["base"] == "unsat" and res.details["selected"] == ["A", "B"]


def test_check_options_reports_the_broken_option(sandbox):
    base = "(declare-const x Int)(assert (> x 2))"
    res = Z3Runner(sandbox).check_options(base, {"A": "(> x 1)", "B": "(> z 1)"}, "must_be_true")
    assert res.status == "parse_error"
    assert "option B" in (res.error or "") and "unknown constant z" in (res.error or "")


def test_scholarship_example_paper_figure2(sandbox):
    """SymbolLKG Figure 2: STEM major with GPA >= 3.8 is eligible; Alice (STEM, 3.9) is,
    Bob (Arts, 3.5) is not entailed either way (the rule is an 'if', not an 'iff')."""
    base = """
    (declare-sort Person 0)
    (declare-const alice Person) (declare-const bob Person)
    (declare-fun stem (Person) Bool) (declare-fun gpa (Person) Real)
    (declare-fun eligible (Person) Bool)
    (assert (forall ((p Person)) (=> (and (stem p) (>= (gpa p) 3.8)) (eligible p))))
    (assert (stem alice)) (assert (= (gpa alice) 3.9))
    (assert (not (stem bob))) (assert (= (gpa bob) 3.5))
    """
    runner = Z3Runner(sandbox)
    opts = {"alice": "(eligible alice)", "bob": "(eligible bob)"}
    assert runner.check_options(base, opts, "must_be_true").details["selected"] == ["alice"]
    assert runner.check_options(base, opts, "could_be_false").details["selected"] == ["bob"]


def test_nonterminating_program_hits_cpu_limit(sandbox):
    hard = """(declare-const x Int)(declare-const y Int)(declare-const z Int)
    (assert (> x 0))(assert (> y 0))(assert (> z 0))
    (assert (= (+ (* x x x) (* y y y)) (* z z z)))(check-sat)"""
    # a generous wall clock: on a starved machine (a CI dry run measured < 1 s of CPU in
    # 10 s of wall time) the wall clock must not fire before the CPU limit under test
    res = run_z3(hard, limits=SolverLimits(cpu_s=1, memory_mb=512, wall_s=60), sandbox=sandbox)
    assert res.status == "timeout" and res.error_kind == "cpu_limit"
    assert res.error == "cpu time limit 1s exceeded"


def test_wall_clock_limit(sandbox):
    hard = """(declare-const x Int)(declare-const y Int)(declare-const z Int)
    (assert (> x 0))(assert (> y 0))(assert (> z 0))
    (assert (= (+ (* x x x) (* y y y)) (* z z z)))(check-sat)"""
    res = run_z3(hard, limits=SolverLimits(cpu_s=30, memory_mb=512, wall_s=0.5), sandbox=sandbox)
    assert res.error_kind == "wall_clock" and res.error == "wall clock 0.5s exceeded"
    assert res.time_s < 5


def test_huge_allocation_hits_memory_limit(sandbox):
    prog = "(declare-const b (_ BitVec 200000000))(assert (= b (bvmul b b)))(check-sat)"
    res = run_z3(prog, limits=SolverLimits(cpu_s=10, memory_mb=256, wall_s=20), sandbox=sandbox)
    assert res.status == "memory" and res.error == "memory limit 256 MB exceeded"


def test_output_flood_is_a_named_error():
    flood = "(declare-const x Int)\n" + ('(echo "' + "y" * 1000 + '")\n') * 3000
    res = run_z3(flood, sandbox=Sandbox(SolverLimits(5, 512, 10), max_output=1 << 20))
    assert res.status == "solver_error" and res.error_kind == "output_limit"
    assert res.error == "output limit 1 MB exceeded"
