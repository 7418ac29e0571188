"""Run an existing solver program with no LLM: detect its format, translate, solve.

Formats (`detect_format` returns the name; `run_program(fmt=...)` also takes the aliases):

- "smtlib" (smt2, smt, z3): SMT-LIB 2 for Z3. If it follows kgreason's codegen convention
  (`(define-fun goal () Bool ...)`, or one `(define-fun option_X () Bool ...)` per option
  with an optional `; mode: could_be_true` line) the checks are composed as the SymbolLKG
  pipeline does (`kgreason.lkg.execute`); otherwise it runs as written and the verdict is
  the last `(check-sat)` answer (sat/unsat/unknown).
- "prover9" (ladr): native Prover9 input, `formulas(assumptions). ... end_of_list.` plus a
  `formulas(goals).` block with one goal: True (goal proved) / False (negation proved) /
  Unknown, as Logic-LM decides FOLIO.
- "fol": Logic-LM's FOLIO programs (`Predicates:` / `Premises:` / `Conclusion:`, Unicode
  FOL, `formula ::: gloss`) -> Prover9, same True/False/Unknown decision.
- "pyke" (horn, rules): Logic-LM's ProntoQA/ProofWriter rule programs (`Predicates:` /
  `Facts:` / `Rules:` / `Query:`, `A($x, True) >>> B($x, True)`) on the Horn engine
  (clingo). Closed world (not derived = False) when the options are True/False only or
  dataset="ProntoQA"; open world (Unknown possible) otherwise.
- "asp" (clingo): a raw answer-set program (`head :- body.`); verdict sat/unsat, model atoms.
- "deduction": Logic-LM's LogicalDeduction programs (`Domain:` / `Variables:` /
  `Constraints:` / `Query:`) -> SMT-LIB; the answer is the option true in every solution.
- "arlsat": Logic-LM's AR-LSAT programs (SatLM's Z3 DSL: `# Declarations` / `# Constraints`
  / `# Options`) -> SMT-LIB; the answer is the first option whose check passes.

Formats, aliases and the solver each routes to are read from a `SolverRegistry`
(`default_solvers()` unless one is passed): a registered solver's own formats run through
its `run(program, ctx)`. Every built-in solver runs in the sandboxed subprocess of
`kgreason.lkg.solvers` under `limits`; no program text is executed in Python.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgreason.lkg.logiclm.arlsat import run_arlsat
from kgreason.lkg.logiclm.deduction import run_deduction
from kgreason.lkg.logiclm.fol import parse_logiclm_fol
from kgreason.lkg.logiclm.pyke import run_logiclm_rules
from kgreason.lkg.logiclm.smtquery import ChoiceOutcome
from kgreason.lkg.router import options_kind, split_option
from kgreason.lkg.solvers import HornRunner, Prover9Runner, Sandbox, SolverLimits, Z3Runner
from kgreason.lkg.solvers.base import ErrorKind, ProgramFormatError, SolverResult
from kgreason.lkg.solvers.ladr import read_ladr
from kgreason.lkg.solvers.registry import RunContext, SolverRegistry, default_solvers

#: The built-in formats, aliases and routes (read-only views of `default_solvers()`).
FORMATS: tuple[str, ...] = tuple(default_solvers().format_routes())
ALIASES: dict[str, str] = default_solvers().aliases()
ROUTES: dict[str, str] = default_solvers().format_routes()
#: Logic-LM's letters for True / False / Unknown per dataset.
TFU_LETTERS = {"ProntoQA": ("A", "B", "B"), "ProofWriter": ("A", "B", "C"),
               "FOLIO": ("A", "B", "C")}  # fmt: skip
_HEADERS = ("# Declarations", "# Constraints", "# Options", "Variables:", "Constraints:",
            "Query:", "Domain:", "Premises:", "Conclusion:", "Facts:", "Rules:")  # fmt: skip
#: a fact or atom alone on its line (`^[^\S\n]*`: a match whose leading white space spans
#: lines also matches from the last line start, so this finds what `^\s*` did, linearly)
_ASP_FACT = re.compile(r"^[^\S\n]*[a-z]\w*(\([^()]*\))?\s*\.\s*$", re.M)
_CONVENTION = re.compile(r"\(define-fun\s+(goal|opt(ion)?_?[A-Za-z])\s", re.I)


@dataclass
class ProgramOutcome:
    """What `run_program` found. `answer` is an option letter when one is determinable;
    `verdict` is True/False/Unknown, sat/unsat/unknown, or the letter for option programs."""

    format: str
    route: str
    status: str
    verdict: str | None = None
    answer: str | None = None
    solver: str = ""
    results: list[SolverResult] = field(default_factory=list)
    proof: str | None = None
    model: dict[str, str] | None = None
    error_kind: str | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    time_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def detect_format(text: str) -> str:
    """Name the format of a program text (see the module docstring); raises
    ProgramFormatError(kind="unknown_format") when none matches.

    A header counts where a line (split at newlines only, where re.M's `^` matches) starts
    with it after white space: the lines are read once, where a `^ *HEADER` search (with
    white space that spans lines) rescanned the rest of the text from every line start."""
    lines = [ln.lstrip() for ln in text.split("\n")]
    found = {h for ln in lines if ln.startswith(_HEADERS) for h in _HEADERS if ln.startswith(h)}

    def has(*headers: str) -> bool:
        return all(h in found for h in headers)

    if has("# Declarations") or (has("# Constraints", "# Options")):
        return "arlsat"
    if has("Variables:", "Constraints:", "Query:") or (has("Domain:") and "[IN]" in text):
        return "deduction"
    if has("Premises:") or has("Conclusion:"):
        return "fol"
    if "formulas(" in text:
        return "prover9"
    if has("Query:") and (has("Facts:") or has("Rules:")):
        return "pyke"
    stripped = text.lstrip()
    if stripped.startswith(("(", ";")):
        return "smtlib"
    if ":-" in text or _ASP_FACT.search(text):
        return "asp"
    raise ProgramFormatError(
        "program format not recognised (expected SMT-LIB, Prover9, Logic-LM FOL / rules / "
        "LogicalDeduction / AR-LSAT, or ASP)",
        kind="unknown_format",
    )


def normalize_format(fmt: str, solvers: SolverRegistry | None = None) -> str:
    reg = solvers or default_solvers()
    formats = reg.format_routes()
    f = fmt.strip().lower()
    f = reg.aliases().get(f, f)
    if f not in formats:
        raise ProgramFormatError(
            f"unknown program format {fmt!r}; use one of {list(formats)}", kind="unknown_format"
        )
    return f


def tfu_letter(
    value: str | None, options: Sequence[str] | None, dataset: str | None = None
) -> str | None:
    """Letter of the option saying True/False/Unknown (Unknown also matches Uncertain);
    without options, Logic-LM's letters for `dataset`."""
    if value is None:
        return None
    if options and options_kind(options) != "statements":
        want = {"unknown": {"unknown", "uncertain"}}.get(value.lower(), {value.lower()})
        for i, o in enumerate(options):
            letter, body = split_option(o)
            if body.strip(" .").lower() in want:
                return letter or chr(65 + i)
        return None
    if dataset in TFU_LETTERS:
        return TFU_LETTERS[dataset][("True", "False", "Unknown").index(value)]
    return None


def _from_result(fmt: str, res: SolverResult, route: str | None = None) -> ProgramOutcome:
    route = route or ROUTES[fmt]
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


def _from_choice(fmt: str, co: ChoiceOutcome) -> ProgramOutcome:
    out = _from_result(fmt, co.result)
    out.answer = out.verdict = co.letter
    out.notes = list(co.notes)
    if co.error_kind:
        out.error_kind, out.error = co.error_kind, co.error
        if co.result.ok and co.error_kind != "no_option":
            out.status = "solver_error"
    return out


def _parse_failure(fmt: str, solver: str, e: ProgramFormatError) -> ProgramOutcome:
    kind: ErrorKind = "refused" if e.kind == "refused" else "parse_error"
    res = SolverResult(solver, "parse_error", error_kind=kind, error=str(e))
    res.details["kind"] = e.kind
    return _from_result(fmt, res)


def run_program(
    text: str,
    fmt: str | None = None,
    *,
    question: str = "",
    options: Sequence[str] | None = None,
    dataset: str | None = None,
    limits: SolverLimits | None = None,
    sandbox: Sandbox | None = None,
    solvers: SolverRegistry | None = None,
) -> ProgramOutcome:
    """Detect (or take) the format, translate, and run on the route's sandboxed solver.
    Parse problems come back as an outcome with status "parse_error" and `error_kind`
    naming the problem; only an unknown format raises ProgramFormatError. A format of a
    solver registered beyond the built-ins must be named (`fmt`): detection knows only
    the built-in formats."""
    fmt = normalize_format(fmt, solvers) if fmt else detect_format(text)
    limits = limits or SolverLimits()
    sandbox = sandbox or Sandbox(limits)
    if fmt not in ROUTES:  # a registered solver's own format: its run() decides it
        solver = (solvers or default_solvers()).for_format(fmt)
        ctx = RunContext(limits, sandbox, question, options)
        out = _from_result(fmt, solver.run(text, ctx), solver.name)
        tfu = out.ok and out.verdict in ("True", "False", "Unknown")
        out.answer = tfu_letter(out.verdict, options, dataset) if tfu else None
        return out
    if fmt == "deduction":
        return _from_choice(fmt, run_deduction(text, runner=Z3Runner(sandbox, limits)))
    if fmt == "arlsat":
        return _from_choice(fmt, run_arlsat(text, runner=Z3Runner(sandbox, limits)))
    if fmt in ("fol", "prover9"):
        runner = Prover9Runner(sandbox, limits)
        try:
            if fmt == "fol":
                prob = parse_logiclm_fol(text)
                premises, goal, notes = prob.premises, prob.conclusion, prob.notes
            else:
                premises, goal, notes = read_ladr(text)
        except ProgramFormatError as e:
            return _parse_failure(fmt, "prover9", e)
        out = _from_result(fmt, runner.decide(premises, goal))
        out.notes = notes + out.notes
        out.answer = tfu_letter(out.verdict, options, dataset) if out.ok else None
        return out
    if fmt == "pyke":
        closed = dataset == "ProntoQA" or (dataset is None and options_kind(options) == "tf")
        po = run_logiclm_rules(
            text, "ProntoQA" if closed else "ProofWriter", runner=HornRunner(sandbox, limits)
        )
        out = _from_result(fmt, po.result)
        out.notes = list(po.notes)
        if po.letter is not None:
            out.verdict = {"A": "True", "B": "False", "C": "Unknown"}[po.letter]
            out.answer = tfu_letter(out.verdict, options, dataset or "ProofWriter")
        return out
    if fmt == "asp":
        return _from_result(fmt, HornRunner(sandbox, limits).run_asp(text))
    return _smtlib(text, question, options, limits, sandbox)


def _smtlib(
    text: str,
    question: str,
    options: Sequence[str] | None,
    limits: SolverLimits,
    sandbox: Sandbox,
) -> ProgramOutcome:
    if _CONVENTION.search(text):
        from kgreason.lkg.execute import ProgramExecutor  # the pipeline's z3 convention

        res = ProgramExecutor(limits, sandbox).run_z3(text, question, options)
        out = _from_result("smtlib", res)
        kind = options_kind(options)
        if res.ok and res.answer:
            out.answer = res.answer if kind == "statements" else tfu_letter(res.answer, options)
        return out
    return _from_result("smtlib", Z3Runner(sandbox, limits).run(text))
