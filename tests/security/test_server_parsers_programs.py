"""Attack: a program sent to `POST /v1/solve` (up to 200,000 characters) that makes a
host-side parser super-linear. Python's `re` and parsing loops hold the GIL, so one such
program froze the whole server: `"x" + "\\n" * 30000` stalled it 9.2 s in `detect_format`
(`^\\s*HEADER` with re.M), `"formulas(a)." * 7000` 2.7 s in the LADR list reader (a lazy
`.*?end_of_list` with no end). Every parser of program text and of (attacker-influenced)
solver output is timed here at 10k / 50k / 200k characters on adversarial inputs; only the
ratio of cost per character counts (`linear.py`). The engines are never run: a stub sandbox
hands back canned output at once, so only the host's own parsing is measured.

Written before the defence. On the code before it these failed (growth of the cost per
character, linear ~1x, quadratic ~20x): detect_format on many newlines / spaces / blank
lines, run_program's prover9 step, the LADR readers and Prover9Runner.run_input on
unclosed `formulas(a).` lists, the z3 convention's `; mode:` reader, screen_asp on many
directives, the AR-LSAT declaration notes and binder walk, the FOL quantifier scope,
Prover9's proof and error-block readers; and a `→` chain or nested `Not(...)` raised
RecursionError instead of a format error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kgreason.lkg.execute import ProgramExecutor
from kgreason.lkg.logiclm.arlsat import parse_arlsat
from kgreason.lkg.logiclm.deduction import parse_deduction
from kgreason.lkg.logiclm.fol import parse_fol, parse_logiclm_fol
from kgreason.lkg.logiclm.pyexpr import parse_expr
from kgreason.lkg.logiclm.pyke import parse_atom, parse_pyke_program
from kgreason.lkg.programs import detect_format, run_program
from kgreason.lkg.solvers import HornRunner, ProgramFormatError, Prover9Runner, Z3Runner
from kgreason.lkg.solvers import prover9 as p9
from kgreason.lkg.solvers import z3 as z3mod
from kgreason.lkg.solvers.base import SolverLimits
from kgreason.lkg.solvers.conventions import run_rules_convention, run_smt_convention
from kgreason.lkg.solvers.preflight import EngineCheck
from kgreason.lkg.solvers.sandbox import Sandbox, SandboxRun
from kgreason.lkg.solvers.screens import (
    screen_asp,
    screen_ladr_formula,
    screen_ladr_outside,
    screen_smtlib,
)
from kgreason.lkg.solvers.sexpr import forms, parse, split_top, tokenize
from tests.security.linear import assert_linear, repeat_to

LIMITS = SolverLimits(cpu_s=5, memory_mb=256, wall_s=10)
OPTIONS = ["A) the first", "B) the second"]


class InstantSandbox(Sandbox):
    """Answers every run at once with `stdout`: the engine is not started, so the time
    measured is the host's parsing and translation alone."""

    def __init__(self, stdout: str = "", returncode: int = 0) -> None:
        super().__init__(LIMITS)
        self.stdout, self.returncode = stdout, returncode
        for engine in ("z3", "prover9", "clingo"):
            self.checks[engine] = EngineCheck(engine, "ok", "stub", False)

    def run(self, argv: list[str], **_: Any) -> SandboxRun:  # type: ignore[override]
        return SandboxRun(self.returncode, self.stdout, "", 0.0, 0.0, None, None, True)


def _run(fmt: str, **kw: Any) -> Callable[[str], Any]:
    return lambda text: run_program(text, fmt, sandbox=InstantSandbox(), limits=LIMITS, **kw)


def _out(read: Callable[[SandboxRun], Any], rc: int = 0) -> Callable[[str], Any]:
    """A reader of engine output, fed the text as the engine's stdout."""
    return lambda text: read(SandboxRun(rc, text, "", 0.0, 0.0, None, None, True))


NL = repeat_to("\n", "x")
SPACES = repeat_to(" ", "x")
BLANK = repeat_to(" \t \n")
CRLF = repeat_to("\r\n", "x")
OPEN = repeat_to("(")
QUOTES = repeat_to('"')
SEMIS = repeat_to(";\n")
PCT = repeat_to("% c\n")
ONE = repeat_to("a")
FORMULAS = repeat_to("formulas(a).")
FORMULAS_NL = repeat_to("formulas(assumptions).\np(a).\n")
TOP = "Predicates:\nP($x, bool)\nFacts:\nP(a, True)\nRules:\n"
PYKE_Q = "\nQuery:\nP(a, True)\n"
DED = "Domain:\n1: a\nVariables:\nx [IN] [1, 2]\nConstraints:\n"
DED_Q = "\nQuery:\nA) x == 1\n"
LSAT = "# Declarations\np = EnumSort([a, b])\n"
LSAT_END = "# Constraints\n# Options\nis_sat(a == a) ::: (A)\n"
MODE = "(define-fun option_A () Bool true)\n(define-fun option_B () Bool false)\n"
LADR_OK = "formulas(assumptions).\np(a).\nend_of_list.\nformulas(goals).\np(a).\nend_of_list.\n"

# (parser, maker) pairs: every parser of request text, each on the inputs that could make it
# rescan (a quantifier or lazy match with no end in sight, one scan per line or per form).
PROGRAM_TEXT = [
    ("detect/newlines", detect_format, NL),
    ("detect/spaces", detect_format, SPACES),
    ("detect/blank-lines", detect_format, BLANK),
    ("detect/crlf", detect_format, CRLF),
    ("detect/headers", detect_format, repeat_to("Query:\n")),
    ("detect/header-after-newlines", detect_format, repeat_to("\n", "x", "Facts:")),
    ("detect/semicolons", detect_format, SEMIS),
    ("detect/percent", detect_format, PCT),
    ("detect/formulas", detect_format, FORMULAS),
    ("detect/asp-facts", detect_format, repeat_to("a.\n")),
    ("detect/asp-open-args", detect_format, repeat_to("a(", "x\n")),
    ("detect/asp-word-spaces", detect_format, repeat_to(" ", "a")),
    ("detect/asp-dots", detect_format, repeat_to("a\n.\n")),
    ("prover9/formulas", _run("prover9"), FORMULAS),
    ("prover9/formulas-lines", _run("prover9"), FORMULAS_NL),
    ("prover9/formulas-spaces", _run("prover9"), repeat_to("formulas(a). ")),
    ("prover9/header-spaces", _run("prover9"), repeat_to(" ", "formulas(")),
    ("prover9/end-without-dot", _run("prover9"), repeat_to("end_of_list ", "formulas(a).")),
    ("prover9/many-lists", _run("prover9"), repeat_to(LADR_OK)),
    ("prover9/percent", _run("prover9"), repeat_to("% c\n", "formulas(goals).\n")),
    ("prover9/quotes", _run("prover9"), QUOTES),
    ("prover9/newlines", _run("prover9"), NL),
    ("fol/newlines", _run("fol"), repeat_to("\n", "Premises:\n", "Conclusion:\nP(a)")),
    ("fol/premises", _run("fol"), repeat_to("P(a) ::: g\n", "Premises:\n", "Conclusion:\nP(a)")),
    ("fol/headers", _run("fol"), repeat_to("Premises:\nConclusion:\n")),
    ("fol/long-and", _run("fol"), repeat_to(" ∧ P(a)", "Premises:\nP(a)", "\nConclusion:\nP(a)")),
    ("pyke/newlines", _run("pyke"), repeat_to("\n", TOP, PYKE_Q)),
    ("pyke/facts", _run("pyke"), repeat_to("P(a, True)\n", TOP, PYKE_Q)),
    ("pyke/rules", _run("pyke"), repeat_to("P($x, True) >>> P($x, True)\n", TOP, PYKE_Q)),
    ("pyke/rule-vars", _run("pyke"), lambda n: _many_vars(n)),
    ("pyke/headers", _run("pyke"), repeat_to("Query:\n")),
    ("deduction/newlines", _run("deduction"), repeat_to("\n", DED, DED_Q)),
    ("deduction/constraints", _run("deduction"), repeat_to("x != 3\n", DED, DED_Q)),
    (
        "deduction/domain",
        _run("deduction"),
        repeat_to(", 1", "Domain:\n1: a\nVariables:\nx [IN] [1", "]\nConstraints:\n" + DED_Q),
    ),
    (
        "deduction/alldiff",
        _run("deduction"),
        repeat_to(", x", DED + "AllDifferentConstraint([x", "])" + DED_Q),
    ),
    ("arlsat/newlines", _run("arlsat"), repeat_to("\n", LSAT, LSAT_END)),
    ("arlsat/ignored-decls", _run("arlsat"), repeat_to("x\n", LSAT, LSAT_END)),
    (
        "arlsat/members",
        _run("arlsat"),
        repeat_to(", m", "# Declarations\np = EnumSort([m", "])\n" + LSAT_END),
    ),
    (
        "arlsat/wide-and",
        _run("arlsat"),
        repeat_to(
            ", a == a", LSAT + "# Constraints\nAnd([a == a", "])\n# Options\nis_sat(a == a)\n"
        ),
    ),
    ("smtlib/newlines", _run("smtlib"), repeat_to("\n", "(check-sat)")),
    ("smtlib/forms", _run("smtlib"), repeat_to("(assert true)\n", "", "(check-sat)")),
    ("smtlib/comments", _run("smtlib"), repeat_to("; c\n", "(check-sat)\n")),
    ("smtlib/goal-spaces", _run("smtlib"), repeat_to(" ", "(define-fun goal () Bool", " true)")),
    (
        "smtlib/mode-spaces",
        _run("smtlib", options=OPTIONS),
        repeat_to(" ", MODE + "; mode: a", "!\n"),
    ),
    ("smtlib/mode-newlines", _run("smtlib", options=OPTIONS), repeat_to("\n", MODE)),
    ("smtlib/mode-semis", _run("smtlib", options=OPTIONS), repeat_to(";", MODE)),
    ("asp/newlines", _run("asp"), repeat_to("\n", "a.")),
    ("asp/directives", _run("asp"), repeat_to("#show a/1.\n")),
    ("asp/comments", _run("asp"), repeat_to("%* c *%")),
    ("asp/string", _run("asp"), repeat_to("\\a", 'a("', '").')),
]

READERS = [
    ("parse_fol/quantified", parse_fol, repeat_to(",v", "∀v", " P(c)")),
    ("parse_fol/scope", parse_fol, repeat_to(",c", "∀v0,v1,v2,v3,v4,v5,v6,v7,v8,v9 P(c", ")")),
    ("parse_fol/bound-wide", parse_fol, lambda n: _bound_wide(n)),
    ("parse_fol/quotes", parse_fol, repeat_to('"', "P(", ")")),
    (
        "parse_logiclm_fol/lines",
        parse_logiclm_fol,
        repeat_to("\n", "Premises:\n", "Conclusion:\nP(a)"),
    ),
    ("parse_pyke/newlines", parse_pyke_program, repeat_to("\n", TOP, PYKE_Q)),
    (
        "parse_pyke/sections",
        parse_pyke_program,
        repeat_to("Facts:\nP(a, True) ::: x\n", TOP, PYKE_Q),
    ),
    ("parse_atom/not-wrap", lambda t: parse_atom(t, [], where="fact"), lambda n: _nested_not(n)),
    ("parse_atom/args", lambda t: parse_atom(t, [], where="fact"), repeat_to(", a", "P(a", ")")),
    ("parse_deduction/newlines", parse_deduction, repeat_to("\n", DED, DED_Q)),
    ("parse_arlsat/ignored-decls", parse_arlsat, repeat_to("x\n", LSAT, LSAT_END)),
    (
        "parse_arlsat/wide-and",
        parse_arlsat,
        repeat_to(
            ", a == a",
            LSAT + "# Constraints\nAnd([a == a",
            "])\n" + LSAT_END[len("# Constraints\n") :],
        ),
    ),
    ("parse_expr/digits", parse_expr, repeat_to("1", "", "x")),
    ("parse_expr/wide", parse_expr, repeat_to(", 1", "f(1", ")")),
    ("screen_smtlib/escaped-quotes", screen_smtlib, repeat_to('""', '(echo "', '")')),
    ("screen_smtlib/unclosed", screen_smtlib, OPEN),
    ("screen_smtlib/quotes", screen_smtlib, QUOTES),
    ("screen_smtlib/pipes", screen_smtlib, repeat_to("|")),
    ("screen_smtlib/keywords", screen_smtlib, repeat_to(" :a", "(set-info", ")")),
    ("screen_smtlib/semis", screen_smtlib, SEMIS),
    ("screen_asp/directives", screen_asp, repeat_to("#show a/1.\n")),
    ("screen_asp/hashes", screen_asp, repeat_to("#")),
    ("screen_asp/percent", screen_asp, repeat_to("%\n")),
    ("screen_asp/open-block", screen_asp, repeat_to("%*")),
    ("screen_asp/escapes", screen_asp, repeat_to("\\\\", 'a("', '").')),
    ("screen_ladr_outside/quotes", screen_ladr_outside, QUOTES),
    ("screen_ladr_outside/percent", screen_ladr_outside, PCT),
    ("screen_ladr_formula/quotes", screen_ladr_formula, repeat_to('"a" ')),
    ("screen_ladr_formula/words", screen_ladr_formula, repeat_to("formulas ")),
    ("tokenize/strict-spaces", lambda t: tokenize(t, strict=True), SPACES),
    ("tokenize/escaped-quotes", lambda t: tokenize(t, strict=False), repeat_to('""', '"')),
    ("tokenize/symbol", lambda t: tokenize(t, strict=False), ONE),
    ("split_top/forms", split_top, repeat_to("(a)")),
    ("split_top/unclosed", split_top, OPEN),
    ("parse/wide", parse, repeat_to(" a", "(", ")")),
    ("forms/flat", lambda t: forms(tokenize(t, strict=False), t), repeat_to("(a) ")),
    (
        "conventions.run_smt_convention/mode-spaces",
        lambda t: run_smt_convention(t, "", OPTIONS, Z3Runner(InstantSandbox(), LIMITS)),
        repeat_to(" ", MODE + "; mode: a", "!\n"),
    ),
    (
        "conventions.run_smt_convention/mode-lines",
        lambda t: run_smt_convention(t, "", OPTIONS, Z3Runner(InstantSandbox(), LIMITS)),
        repeat_to("; x\n", MODE),
    ),
    ("executor.run/prover9/formulas", lambda t: _executor().run("prover9", t, "", None), FORMULAS),
    ("executor.run/prover9/lines", lambda t: _executor().run("prover9", t, "", None), FORMULAS_NL),
    (
        "conventions.run_rules_convention/facts",
        lambda t: run_rules_convention(t, HornRunner(InstantSandbox(), LIMITS)),
        repeat_to("P(a, True)\n", TOP, PYKE_Q),
    ),
    (
        "Prover9Runner.run_input/formulas",
        lambda t: Prover9Runner(InstantSandbox(), LIMITS).run_input(t),
        FORMULAS,
    ),
    (
        "HornRunner.run_asp/directives",
        lambda t: HornRunner(InstantSandbox(), LIMITS).run_asp(t),
        repeat_to("#show a/1.\n"),
    ),
]

# Engine output a program can steer (Prover9 echoes its input, Z3 echoes strings).
ENGINE_OUTPUT = [
    (
        "prover9/proof-header",
        _out(lambda r: p9._result(r, "", LIMITS), 2),
        repeat_to("= PROOF =\n"),
    ),
    ("prover9/equals", _out(lambda r: p9._result(r, "", LIMITS), 2), repeat_to("=")),
    (
        "prover9/proof-no-end",
        _out(lambda r: p9._result(r, "", LIMITS), 2),
        repeat_to("\n=", "= PROOF =\n"),
    ),
    (
        "prover9/error-no-start",
        _out(lambda r: p9._result(r, "", LIMITS), 1),
        repeat_to("%%ERROR: x\n"),
    ),
    (
        "prover9/error-no-end",
        _out(lambda r: p9._result(r, "", LIMITS), 1),
        repeat_to("%%ERROR: x\n%%START ERROR%%"),
    ),
    ("prover9/fatal", _out(lambda r: p9._result(r, "", LIMITS), 1), repeat_to(" ", "Fatal error:")),
    ("prover9/newlines", _out(lambda r: p9._result(r, "", LIMITS), 1), repeat_to("\n")),
    (
        "z3/errors-unclosed",
        _out(lambda r: z3mod._result(r, "(check-sat)", False)),
        repeat_to("x", '(error "'),
    ),
    (
        "z3/errors",
        _out(lambda r: z3mod._result(r, "(check-sat)", False), 1),
        repeat_to('(error "a")\n'),
    ),
    ("z3/quotes", _out(lambda r: z3mod._result(r, "(check-sat)", False)), QUOTES),
    (
        "z3/echo-quotes",
        _out(lambda r: z3mod._result(r, "(check-sat)", False)),
        repeat_to('x" y\n', "", "sat\n"),
    ),
    ("z3/unclosed", _out(lambda r: z3mod._result(r, "(check-sat)", False)), OPEN),
    ("z3/verdicts", _out(lambda r: z3mod._result(r, "(check-sat)", False)), repeat_to("sat\n")),
    (
        "z3/model",
        _out(lambda r: z3mod._result(r, "(check-sat)", True)),
        repeat_to(" (define-fun x () Int 1)", "sat\n(", ")\n"),
    ),
    ("z3/backslashes", _out(lambda r: z3mod._result(r, "(check-sat)", False)), repeat_to('"\\"\n')),
    (
        "z3/options",
        lambda t: Z3Runner(InstantSandbox(t), LIMITS).check_options(
            "(declare-const p Bool)", {"A": "p"}
        ),
        repeat_to("kgr-option:A\nsat\n"),
    ),
    (
        "clingo/lines",
        lambda t: HornRunner(InstantSandbox(t), LIMITS).run_asp("a."),
        repeat_to("\n", "{"),
    ),
]


def _bound_wide(n: int) -> str:
    """A quantifier binding many distinct names, then an atom with many constants."""
    k = max(1, n // 14)
    names = ",".join(f"v{i}" for i in range(k))
    return f"∀{names} P({','.join('c' for _ in range(k))})"


def _many_vars(n: int) -> str:
    """One rule whose body binds thousands of distinct variables."""
    k = max(1, (n - 80) // 9)
    args = ", ".join(f"$v{i}" for i in range(k))
    return f"{TOP}P($x, {args}, True) >>> P($x, True){PYKE_Q}"


def _nested_not(n: int) -> str:
    k = max(1, (n - 10) // 5)
    return "Not(" * k + "P(a, True)" + ")" * k


def _executor() -> ProgramExecutor:
    return ProgramExecutor(LIMITS, InstantSandbox())


@pytest.mark.parametrize(
    ("fn", "make", "what"),
    [pytest.param(fn, make, what, id=what) for what, fn, make in PROGRAM_TEXT],
)
def test_program_parsers_are_linear(fn, make, what):
    assert_linear(fn, make, what)


@pytest.mark.parametrize(
    ("fn", "make", "what"), [pytest.param(fn, make, what, id=what) for what, fn, make in READERS]
)
def test_readers_and_screens_are_linear(fn, make, what):
    assert_linear(fn, make, what)


@pytest.mark.parametrize(
    ("fn", "make", "what"),
    [pytest.param(fn, make, what, id=what) for what, fn, make in ENGINE_OUTPUT],
)
def test_engine_output_readers_are_linear(fn, make, what):
    assert_linear(fn, make, what)


def test_a_long_implication_chain_is_a_format_error_not_a_recursion_error():
    with pytest.raises(ProgramFormatError) as exc:
        parse_fol("a → " * 3000 + "a")
    assert exc.value.kind == "too_deep"


def test_nested_not_is_a_format_error_not_a_recursion_error():
    with pytest.raises(ProgramFormatError) as exc:
        parse_atom(_nested_not(20_000), [], where="fact 1")
    assert exc.value.kind == "too_deep"
    out = run_program(TOP + _nested_not(20_000) + PYKE_Q, "pyke", sandbox=InstantSandbox())
    assert out.status == "parse_error" and out.error_kind == "too_deep"


def test_the_stub_really_feeds_the_readers():
    """The output tests above measure real reading: the stub's text reaches the result."""
    res = z3mod._result(
        SandboxRun(0, "sat\n", "", 0.0, 0.0, None, None, True), "(check-sat)", False
    )
    assert res.ok and res.verdict == "sat"
    payload = {"status": "sat", "models": [{"structured": [], "text": ["a"]}], "messages": []}
    res = HornRunner(InstantSandbox(json.dumps(payload)), LIMITS).run_asp("a.")
    assert res.ok and res.model == {"atoms": "a"}
