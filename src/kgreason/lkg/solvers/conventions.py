"""The codegen conventions: how a program the codegen prompt asked for is decided.

- z3: SMT-LIB 2 declarations and assertions, then either `(define-fun goal () Bool ...)`
  for a true/false/unknown question or one `(define-fun option_X () Bool ...)` per option
  letter plus a `; mode: could_be_true` line (must_be_true, cannot_be_true,
  could_be_false). Checking commands the model adds are dropped: kgreason composes the
  checks (premises ∧ ¬goal, premises ∧ goal; or one check per option).
- prover9: Logic-LM's FOL format (`Premises:` / `Conclusion:`, Unicode connectives) or
  native Prover9 input (`formulas(assumptions). ... formulas(goals). ...`).
- horn: Logic-LM's rule format (`Predicates:` / `Facts:` / `Rules:` / `Query:`).

Each takes the engine's runner, so an adapter (`kgreason.lkg.solvers.builtin`) applies
its convention without going through an executor. Nothing here executes model-written
code: each program is parsed and handed to an engine in the sandboxed subprocess.
Convention problems (a missing option, no goal, several options qualifying) come back
as failed `SolverResult`s with a message the repair loop can show the model. A program that
ran but gave no usable answer (several options qualify, inconsistent premises, a
contradicting rule set) is marked `details["unusable"]`: it raised no error, so the
paper's loop (section 3.4: error messages only) does not repair it unless
`lkg.repair_unusable` is on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kgreason.lkg.logiclm.fol import parse_logiclm_fol
from kgreason.lkg.logiclm.pyke import parse_pyke_program
from kgreason.lkg.options import options_kind, split_option
from kgreason.lkg.solvers.base import ProgramFormatError, SolverResult
from kgreason.lkg.solvers.horn import HornRunner
from kgreason.lkg.solvers.ladr import read_ladr
from kgreason.lkg.solvers.prover9 import Prover9Runner
from kgreason.lkg.solvers.screens import screen_smtlib
from kgreason.lkg.solvers.sexpr import split_top
from kgreason.lkg.solvers.z3 import OptionMode, Z3Runner

MODES: tuple[str, ...] = ("must_be_true", "could_be_true", "cannot_be_true", "could_be_false")
_MODE_HEAD = re.compile(r"\s*;+\s*mode\s*[:=]", re.I)
_MODE_WORDS = re.compile(r"[A-Za-z_\- ]*", re.I)
_HEAD = re.compile(r"^\(\s*([^\s()]+)(?:\s+([^\s()]+))?")
_OPTION_NAME = re.compile(r"^opt(?:ion)?_?([A-Za-z])$", re.I)
#: commands kgreason issues itself; a model's own copies would confuse the composed checks
_DROP = frozenset({
    "check-sat", "check-sat-assuming", "get-model", "get-value", "get-assignment", "exit",
    "push", "pop", "echo", "reset", "reset-assertions", "get-info", "get-assertions",
    "get-proof", "get-unsat-core", "get-option", "eval", "display",
})  # fmt: skip


def infer_mode(question: str) -> OptionMode | None:
    """The option semantics a question asks for ("... could be true EXCEPT" flips)."""
    q = question.lower()
    flip = {
        "must_be_true": "could_be_false",
        "could_be_false": "must_be_true",
        "could_be_true": "cannot_be_true",
        "cannot_be_true": "could_be_true",
    }
    mode: str | None = None
    if re.search(r"cannot be true|can't be true|must be false|could not be true", q):
        mode = "cannot_be_true"
    elif re.search(r"could be false|can be false|need not be true|not necessarily true", q):
        mode = "could_be_false"
    elif re.search(r"must be true|must also be true|is true\?|is necessarily true", q):
        mode = "must_be_true"
    elif re.search(r"could be true|can be true|could also be true|is possible|could be", q):
        mode = "could_be_true"
    if mode and re.search(r"\bexcept\b", q):
        mode = flip[mode]
    return mode  # type: ignore[return-value]


def mode_line(program: str) -> str | None:
    r"""The words of the first `; mode: ...` comment line (stripped), or None.

    Line by line: one search `^\s*;+\s*mode\s*[:=]\s*([A-Za-z_\- ]+?)\s*$` (re.M) over the
    program rescanned the rest of it from every line start, and its lazy words followed by
    white space were quadratic on one long line of spaces. The words read are the same: the
    rest of the line, stripped, when it holds only letters, `_`, `-` and inner spaces."""
    for line in program.split("\n"):
        head = _MODE_HEAD.match(line) if ";" in line else None
        if head is None:
            continue
        rest = line[head.end() :]
        words = rest.strip()
        if _MODE_WORDS.fullmatch(words) and (words or " " in rest):
            return words
    return None


def failed(solver: str, program: str, message: str, kind: str = "parse_error") -> SolverResult:
    """A convention problem as a failed result, with a message the repair loop can show."""
    status = "parse_error" if kind in ("parse_error", "refused") else "solver_error"
    return SolverResult(solver, status, error_kind=kind, error=message, program=program)  # type: ignore[arg-type]


# ---- z3 ---------------------------------------------------------------------------------
def run_smt_convention(
    program: str, question: str, options: Sequence[str] | None, runner: Z3Runner
) -> SolverResult:
    """Compose the checks of a goal or option program and read off the answer."""
    # screen the program as written (the composed checks are screened again): a form
    # the screen cannot read is refused here, before any of it is split or kept
    refused = screen_smtlib(program)
    if refused:
        kind = "parse_error" if refused.startswith("parse_error:") else "refused"
        return failed("z3", program, refused, kind)
    base: list[str] = []
    opts: dict[str, str] = {}
    goal: str | None = None
    for form in split_top(program):
        m = _HEAD.match(form)
        head, name = (m.group(1), m.group(2)) if m else ("", None)
        if head in _DROP:
            continue
        base.append(form)
        if head == "define-fun" and name:
            if name.lower() == "goal":
                goal = name
            elif om := _OPTION_NAME.match(name):
                opts[om.group(1).upper()] = name
    base_smt = "\n".join(base) + "\n"
    kind = options_kind(options)
    if kind == "statements":
        return _options_program(program, question, options or [], runner, base_smt, opts)
    if goal is None:
        want = "(define-fun goal () Bool ...)"
        if kind != "none":
            want = f"{want} (the options {list(options or [])} are read from its truth)"
        return failed("z3", program, f"the program defines no goal: add {want}")
    return _goal_program(runner, base_smt, goal)


def _options_program(
    program: str,
    question: str,
    options: Sequence[str],
    runner: Z3Runner,
    base_smt: str,
    opts: dict[str, str],
) -> SolverResult:
    """One check per option under the program's (or the question's) mode."""
    letters = [split_option(o)[0] or chr(65 + i) for i, o in enumerate(options)]
    missing = [x for x in letters if x not in opts]
    if missing:
        return failed(
            "z3", program,
            f"the program defines no option_{missing[0]}: write one "
            f"(define-fun option_X () Bool ...) for each of the options {letters}",
        )  # fmt: skip
    written = mode_line(program)
    mode = written.lower().replace(" ", "_").replace("-", "_") if written is not None else None
    if mode is None:
        mode = infer_mode(question) or "must_be_true"
    if mode not in MODES:
        return failed("z3", program, f"unknown mode {mode!r}: use one of {list(MODES)}")
    res = runner.check_options(base_smt, {x: opts[x] for x in letters}, mode)  # type: ignore[arg-type]
    if res.ok and res.answer is None:
        sel = res.details.get("selected")
        res.status, res.error_kind = "solver_error", "solver_error"
        res.details["unusable"] = True  # it ran: no error message to feed back
        res.error = (
            f"no unique answer: options satisfying {mode} = {sel}; "
            f"per option {res.details.get('per_option')}. Exactly one option should "
            "qualify: check the encoding of the context and of the options."
        )
    elif res.ok and mode in ("could_be_true", "could_be_false"):
        term = opts[res.answer]  # type: ignore[index]
        _witness(runner, res, base_smt, term if mode == "could_be_true" else f"(not {term})")
    return res


def _goal_program(runner: Z3Runner, base_smt: str, goal: str) -> SolverResult:
    """True if the premises entail the goal, False if they entail its negation."""
    res = runner.check_options(base_smt, {"goal": goal, "negation": f"(not {goal})"})
    if not res.ok:
        return res
    per = res.details.get("per_option", {})
    entailed, refuted = per.get("goal") == "unsat", per.get("negation") == "unsat"
    if entailed and refuted:
        res.status, res.error_kind = "solver_error", "solver_error"
        res.details["unusable"] = True
        res.error = "the premises are inconsistent (unsat on their own): check the assertions"
    elif entailed:
        res.verdict, res.answer = "proved", "True"
    elif refuted:
        res.verdict, res.answer = "disproved", "False"
    else:
        res.verdict, res.answer = "unknown", "Unknown"
        if "unknown" in per.values():
            res.details["note"] = "z3 answered 'unknown' for a check: Unknown is not proved"
        # two witnesses show why it is open: a model where the goal holds, one where not
        _witness(runner, res, base_smt, f"(not {goal})", key="countermodel")
        _witness(runner, res, base_smt, goal)
    return res


def _witness(runner: Z3Runner, res: SolverResult, base: str, term: str, key: str = "model") -> None:
    """Attach a model of base ∧ term (the assignment that makes the answer possible)."""
    w = runner.run(f"{base}(assert {term})\n(check-sat)\n")
    if w.ok and w.verdict == "sat" and w.model is not None:
        if key == "model":
            res.model = w.model
        else:
            res.details[key] = w.model


# ---- prover9 ----------------------------------------------------------------------------
def run_fol_convention(program: str, runner: Prover9Runner) -> SolverResult:
    """Logic-LM FOL (when it has `Premises:` / `Conclusion:`) or native LADR, decided
    True/False/Unknown as Logic-LM decides FOLIO."""
    try:
        if "Premises:" in program or "Conclusion:" in program:
            prob = parse_logiclm_fol(program)
            premises, goal, notes = prob.premises, prob.conclusion, prob.notes
        else:
            premises, goal, notes = read_ladr(program)
    except ProgramFormatError as e:
        kind = "refused" if e.kind == "refused" else "parse_error"
        return failed("prover9", program, str(e), kind)
    res = runner.decide(premises, goal)
    if notes:
        res.details["notes"] = notes
    return res


# ---- horn -------------------------------------------------------------------------------
def run_rules_convention(
    program: str, runner: HornRunner, *, closed_world: bool = False
) -> SolverResult:
    """Logic-LM's rule format on the Horn engine; contradicting rules are an error."""
    try:
        prog = parse_pyke_program(program, closed_world=closed_world)
    except ProgramFormatError as e:
        return failed("clingo", program, str(e))
    res = runner.run(prog)
    if res.ok and res.verdict == "inconsistent":
        res.status, res.error_kind = "solver_error", "solver_error"
        res.details["unusable"] = True
        res.error = "both the query and its negation are derived: the rules contradict"
    if prog.notes:
        res.details["notes"] = list(prog.notes)
    return res
