"""How a solver's `SolverResult` (or a Logic-LM front-end's choice) becomes the
`ProgramOutcome` of `run_format`: shared by the built-in adapters and open to a user's
solver (`outcome_of_run`), so every format reports its answer the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgreason.lkg.options import tfu_letter
from kgreason.lkg.solvers.base import ErrorKind, ProgramFormatError, SolverResult
from kgreason.lkg.solvers.protocol import ProgramOutcome, RunContext, Solver

if TYPE_CHECKING:
    from kgreason.lkg.logiclm.smtquery import ChoiceOutcome


def from_result(fmt: str, route: str, res: SolverResult) -> ProgramOutcome:
    """The outcome of one result: its verdict (the answer when it has one), evidence, and
    on failure the front-end's own error kind (details["kind"]) over the generic one."""
    out = ProgramOutcome(fmt, route, res.status, solver=res.solver, results=[res])
    out.verdict = res.answer or res.verdict
    out.proof, out.model, out.time_s = res.proof, res.model, res.time_s
    if not res.ok:
        out.error_kind = str(res.details.get("kind") or res.error_kind)
        out.error = res.error
    notes = res.details.get("notes")
    if isinstance(notes, list):
        out.notes = [str(n) for n in notes]
    return out


def from_choice(fmt: str, route: str, co: ChoiceOutcome) -> ProgramOutcome:
    """A multiple-choice front-end's outcome: the letter is both verdict and answer; a
    program-level failure it detected (no solution, several options) is an error."""
    out = from_result(fmt, route, co.result)
    out.answer = out.verdict = co.letter
    out.notes = list(co.notes)
    if co.error_kind:
        out.error_kind, out.error = co.error_kind, co.error
        if co.result.ok and co.error_kind != "no_option":
            out.status = "solver_error"
    return out


def parse_failure(fmt: str, route: str, engine: str, e: ProgramFormatError) -> ProgramOutcome:
    """A program the front-end could not read: never handed to the engine."""
    kind: ErrorKind = "refused" if e.kind == "refused" else "parse_error"
    res = SolverResult(engine, "parse_error", error_kind=kind, error=str(e))
    res.details["kind"] = e.kind
    return from_result(fmt, route, res)


def with_tfu_answer(out: ProgramOutcome, ctx: RunContext) -> ProgramOutcome:
    """Read a True/False/Unknown verdict as the option letter (or the dataset's letter)."""
    tfu = out.ok and out.verdict in ("True", "False", "Unknown")
    out.answer = tfu_letter(out.verdict, ctx.options, ctx.dataset) if tfu else None
    return out


def outcome_of_run(solver: Solver, fmt: str, text: str, ctx: RunContext) -> ProgramOutcome:
    """`run_format` for a solver whose formats are the programs its `run` decides: run it
    and read a True/False/Unknown verdict as the option letter."""
    return with_tfu_answer(from_result(fmt, solver.name, solver.run(text, ctx)), ctx)
