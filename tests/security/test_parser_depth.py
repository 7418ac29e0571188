"""Deep nesting never crashes the host: every reader is iterative or depth-limited and
says `parse_error: nesting deeper than N`.

Before the fix: SMT-LIB or FOL nested ~1,200 deep (and deep Z3 model output) raised
RecursionError in the host process, and codegen let it end the question."""

from __future__ import annotations

import pytest

from kgreason.lkg.logiclm.fol import parse_fol, parse_logiclm_fol
from kgreason.lkg.logiclm.pyexpr import parse_expr
from kgreason.lkg.programs import run_program
from kgreason.lkg.solvers import ProgramFormatError, run_z3
from kgreason.lkg.solvers.sandbox import SandboxRun
from kgreason.lkg.solvers.sexpr import MAX_DEPTH, SExprError, parse, split_top
from kgreason.lkg.solvers.z3 import _result

DEEP = 1200


def test_deep_smtlib_is_screened_and_run_without_recursion(sandbox):
    term = "(not " * DEEP + "p" + ")" * DEEP
    program = f"(declare-const p Bool)\n(assert {term})\n(check-sat)\n"
    res = run_z3(program, sandbox=sandbox)
    assert res.status in ("ok", "parse_error", "memory")  # a result, never an exception
    assert split_top(program)[1].startswith("(assert")


def test_deep_smtlib_through_the_goal_convention(sandbox):
    term = "(not " * DEEP + "p" + ")" * DEEP
    program = f"(declare-const p Bool)\n(define-fun goal () Bool {term})\n"
    out = run_program(program, "smtlib", sandbox=sandbox)
    assert out.status in ("ok", "parse_error")


def test_sexpr_parse_is_depth_limited():
    with pytest.raises(SExprError, match=f"parse_error: nesting deeper than {MAX_DEPTH}"):
        parse("(" * DEEP + "x" + ")" * DEEP)
    assert parse("(a (b (c)))") == ["a", ["b", ["c"]]]


def test_deep_model_output_is_reported_not_raised():
    deep = "(define-fun x () Int " + "(+ 1 " * DEEP + "0" + ")" * DEEP + ")"
    run = SandboxRun(0, f"sat\n(\n{deep}\n)\n", "", 0.1, 0.1, None, None, True)
    res = _result(run, "(check-sat)(get-model)", False)
    assert res.ok and res.verdict == "sat"
    assert res.details["model_error"] == f"parse_error: nesting deeper than {MAX_DEPTH}"


@pytest.mark.parametrize(
    "text",
    [
        "(" * DEEP + "P(a)" + ")" * DEEP,
        "¬" * DEEP + "P(a)",
        "∀x " * DEEP + "P(x)",
        " ∧ ".join(["P(a)"] * DEEP),
        "P(" * DEEP + "a" + ")" * DEEP,
    ],
)
def test_deep_fol_is_a_parse_error(text):
    with pytest.raises(ProgramFormatError, match="parse_error: nesting deeper than"):
        parse_fol(text)


def test_deep_fol_program_gives_a_parse_error_outcome(sandbox):
    program = "Premises:\n" + "(" * DEEP + "P(a)" + ")" * DEEP + "\nConclusion:\nP(a)\n"
    with pytest.raises(ProgramFormatError):
        parse_logiclm_fol(program)
    out = run_program(program, "fol", sandbox=sandbox)
    assert out.status == "parse_error" and "nesting deeper than" in (out.error or "")


@pytest.mark.parametrize(
    "text",
    ["(" * DEEP + "1" + ")" * DEEP, "-" * DEEP + "1", " + ".join(["x"] * DEEP),
     "f(" * DEEP + "a" + ")" * DEEP, "not " * DEEP + "x"],
)  # fmt: skip
def test_deep_python_expressions_are_a_parse_error(text):
    with pytest.raises(ProgramFormatError, match="nesting deeper than"):
        parse_expr(text)


def test_deep_logiclm_deduction_and_arlsat_programs(sandbox):
    deep = "(" * DEEP + "1" + ")" * DEEP
    ded = (
        "Domain:\n1: leftmost\n3: rightmost\nVariables:\na [IN] [1, 2, 3]\n"
        f"Constraints:\na == {deep}\nQuery:\nA) a == 1\n"
    )
    out = run_program(ded, "deduction", sandbox=sandbox)
    assert out.status == "parse_error"
    ar = (
        "# Declarations\npeople = EnumSort([a, b])\nn = Function([people] -> [int])\n"
        f"# Constraints\nn(a) == {deep} ::: deep\n# Options\nQuestion ::: q\n"
        "is_sat(n(a) == 1) ::: (A)\n"
    )
    out = run_program(ar, "arlsat", sandbox=sandbox)
    assert out.status == "parse_error"
