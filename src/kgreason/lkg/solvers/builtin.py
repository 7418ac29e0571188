"""The built-in engines behind the `Solver` protocol: Z3, Prover9 and the Horn engine.

Each adapter owns what its engine decides: `run` applies the codegen convention of
`kgreason.lkg.solvers.conventions` to a route program, and `run_format` translates an
existing program of one of its formats (SMT-LIB, LogicalDeduction, AR-LSAT; Prover9,
Logic-LM FOL; Logic-LM rules, ASP) with the Logic-LM front-ends. The runners are called
directly, so no adapter goes back through an executor or `run_program`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources

from kgreason.lkg.logiclm.arlsat import run_arlsat
from kgreason.lkg.logiclm.deduction import run_deduction
from kgreason.lkg.logiclm.fol import parse_logiclm_fol
from kgreason.lkg.logiclm.pyke import run_logiclm_rules
from kgreason.lkg.logiclm.z3py import looks_like_z3py, z3py_to_smtlib
from kgreason.lkg.options import options_kind, tfu_letter
from kgreason.lkg.solvers import horn, prover9, z3
from kgreason.lkg.solvers.base import ProgramFormatError, SolverResult
from kgreason.lkg.solvers.conventions import (
    failed,
    run_fol_convention,
    run_rules_convention,
    run_smt_convention,
)
from kgreason.lkg.solvers.ladr import read_ladr
from kgreason.lkg.solvers.outcome import from_choice, from_result, parse_failure, with_tfu_answer
from kgreason.lkg.solvers.preflight import EngineCheck
from kgreason.lkg.solvers.protocol import ProgramOutcome, RunContext
from kgreason.lkg.solvers.sandbox import Sandbox

#: kgreason's SMT-LIB codegen convention: a goal, or one definition per option
_CONVENTION = re.compile(r"\(define-fun\s+(goal|opt(ion)?_?[A-Za-z])\s", re.I)


def _packaged_prompt(name: str) -> str:
    return resources.files("kgreason.lkg.prompts").joinpath(f"{name}.txt").read_text("utf-8")


def _unhandled(solver: str, fmt: str) -> ProgramFormatError:
    return ProgramFormatError(
        f"solver {solver!r} does not run format {fmt!r}", kind="unknown_format"
    )


def _run_z3py(
    program: str, question: str, options: Sequence[str] | None, runner: z3.Z3Runner
) -> SolverResult:
    """The paper's Z3 Python, translated to the SMT-LIB convention and decided by it."""
    try:
        smt, notes = z3py_to_smtlib(program)
    except ProgramFormatError as e:
        res = failed("z3", program, f"parse_error: {e}")
        res.details["kind"] = e.kind
        return res
    res = run_smt_convention(smt, question, options, runner)
    res.details["notes"] = notes + list(res.details.get("notes") or [])
    res.details["translated_from"] = "z3py"
    return res


@dataclass(frozen=True)
class Z3Solver:
    name: str = "z3"
    label: str = "Z3 (SMT-LIB 2)"
    engine: str = "z3"
    route_words: tuple[str, ...] = ("Z3",)
    formats: tuple[str, ...] = ("smtlib", "deduction", "arlsat", "z3py")
    aliases: Mapping[str, str] = field(
        default_factory=lambda: {
            "smt2": "smtlib",
            "smt": "smtlib",
            "z3": "smtlib",
            "csp": "deduction",
            "lsat": "arlsat",
            "z3-python": "z3py",
        }
    )

    def codegen_prompt(self) -> str:
        return _packaged_prompt("codegen_z3")

    def preflight(self, sandbox: Sandbox) -> EngineCheck:
        return z3.preflight(sandbox)

    def version(self, sandbox: Sandbox) -> str:
        return z3.z3_version(sandbox)

    def _runner(self, ctx: RunContext) -> z3.Z3Runner:
        return z3.Z3Runner(ctx.sandbox or Sandbox(ctx.limits), ctx.limits)

    def run(self, program: str, ctx: RunContext) -> SolverResult:
        """SMT-LIB in the codegen convention, or the paper's Z3 Python (A.2) read into it."""
        if looks_like_z3py(program):
            return _run_z3py(program, ctx.question, ctx.options, self._runner(ctx))
        return run_smt_convention(program, ctx.question, ctx.options, self._runner(ctx))

    def run_format(self, fmt: str, text: str, ctx: RunContext) -> ProgramOutcome:
        """LogicalDeduction and AR-LSAT are translated to one SMT-LIB script; SMT-LIB in
        the goal/option convention is decided as `run` does, otherwise as written (the
        verdict is the last `(check-sat)` answer)."""
        runner = self._runner(ctx)
        if fmt == "deduction":
            return from_choice(fmt, self.name, run_deduction(text, runner=runner))
        if fmt == "arlsat":
            return from_choice(fmt, self.name, run_arlsat(text, runner=runner))
        if fmt not in ("smtlib", "z3py"):
            raise _unhandled(self.name, fmt)
        if fmt == "smtlib" and not _CONVENTION.search(text):
            return from_result(fmt, self.name, runner.run(text))
        if fmt == "z3py":
            res = _run_z3py(text, ctx.question, ctx.options, runner)
        else:
            res = run_smt_convention(text, ctx.question, ctx.options, runner)
        out = from_result(fmt, self.name, res)
        if res.ok and res.answer:
            statements = options_kind(ctx.options) == "statements"
            out.answer = res.answer if statements else tfu_letter(res.answer, ctx.options)
        return out


@dataclass(frozen=True)
class Prover9Solver:
    name: str = "prover9"
    label: str = "Prover9"
    engine: str = "prover9"
    route_words: tuple[str, ...] = ("PROVER9",)
    formats: tuple[str, ...] = ("prover9", "fol")
    aliases: Mapping[str, str] = field(default_factory=lambda: {"ladr": "prover9", "folio": "fol"})

    def codegen_prompt(self) -> str:
        return _packaged_prompt("codegen_prover9")

    def preflight(self, sandbox: Sandbox) -> EngineCheck:
        return prover9.preflight(sandbox)

    def version(self, sandbox: Sandbox) -> str:
        return prover9.prover9_version(sandbox)

    def _runner(self, ctx: RunContext) -> prover9.Prover9Runner:
        return prover9.Prover9Runner(ctx.sandbox or Sandbox(ctx.limits), ctx.limits)

    def run(self, program: str, ctx: RunContext) -> SolverResult:
        return run_fol_convention(program, self._runner(ctx))

    def run_format(self, fmt: str, text: str, ctx: RunContext) -> ProgramOutcome:
        """Logic-LM FOL ("fol") or native LADR ("prover9"), as the format names it, then
        True (goal proved) / False (negation proved) / Unknown."""
        if fmt not in self.formats:
            raise _unhandled(self.name, fmt)
        try:
            if fmt == "fol":
                prob = parse_logiclm_fol(text)
                premises, goal, notes = prob.premises, prob.conclusion, prob.notes
            else:
                premises, goal, notes = read_ladr(text)
        except ProgramFormatError as e:
            return parse_failure(fmt, self.name, "prover9", e)
        out = from_result(fmt, self.name, self._runner(ctx).decide(premises, goal))
        out.notes = notes + out.notes
        return with_tfu_answer(out, ctx)


@dataclass(frozen=True)
class HornSolver:
    name: str = "horn"
    label: str = "Horn-rule (clingo)"
    engine: str = "clingo"
    route_words: tuple[str, ...] = ("PYKE", "HORN")
    formats: tuple[str, ...] = ("pyke", "asp")
    aliases: Mapping[str, str] = field(
        default_factory=lambda: {"horn": "pyke", "rules": "pyke", "clingo": "asp"}
    )

    def codegen_prompt(self) -> str:
        return _packaged_prompt("codegen_horn")

    def preflight(self, sandbox: Sandbox) -> EngineCheck:
        return horn.preflight(sandbox)

    def version(self, sandbox: Sandbox) -> str:
        return horn.clingo_version()

    def _runner(self, ctx: RunContext) -> horn.HornRunner:
        return horn.HornRunner(ctx.sandbox or Sandbox(ctx.limits), ctx.limits)

    def run(self, program: str, ctx: RunContext) -> SolverResult:
        """Closed world for a two-valued (true/false) question, open world otherwise."""
        two_valued = options_kind(ctx.options) == "tf" or (
            not ctx.options and not re.search(r"unknown|uncertain", ctx.question, re.I)
        )
        return run_rules_convention(program, self._runner(ctx), closed_world=two_valued)

    def run_format(self, fmt: str, text: str, ctx: RunContext) -> ProgramOutcome:
        """Logic-LM rules: closed world (not derived = False) for ProntoQA or True/False
        options, open world (Unknown possible) otherwise. ASP: sat/unsat and the model."""
        if fmt == "asp":
            return from_result(fmt, self.name, self._runner(ctx).run_asp(text))
        if fmt != "pyke":
            raise _unhandled(self.name, fmt)
        ds = ctx.dataset
        closed = ds == "ProntoQA" or (ds is None and options_kind(ctx.options) == "tf")
        po = run_logiclm_rules(
            text, "ProntoQA" if closed else "ProofWriter", runner=self._runner(ctx)
        )
        out = from_result(fmt, self.name, po.result)
        out.notes = list(po.notes)
        if po.letter is not None:
            out.verdict = {"A": "True", "B": "False", "C": "Unknown"}[po.letter]
            out.answer = tfu_letter(out.verdict, ctx.options, ds or "ProofWriter")
        return out
