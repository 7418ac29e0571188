"""Run an existing solver program with no LLM: detect its format, translate, solve.

Formats (`detect_format` returns the name; `run_program(fmt=...)` also takes the aliases):

- "smtlib" (smt2, smt, z3): SMT-LIB 2 for Z3. If it follows kgreason's codegen convention
  (`(define-fun goal () Bool ...)`, or one `(define-fun option_X () Bool ...)` per option
  with an optional `; mode: could_be_true` line) the checks are composed as the SymbolLKG
  pipeline does (`kgreason.lkg.solvers.conventions`); otherwise it runs as written and
  the verdict is the last `(check-sat)` answer (sat/unsat/unknown).
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
- "z3py" (z3-python): the SymbolLKG paper's Z3 Python (prompt A.2, Appendix B: `from z3 import
  *`, `s.add(...)`, `option_A = Bool('option_A')`), read as data (never run) into the
  SMT-LIB convention above (`kgreason.lkg.logiclm.z3py`).
- "arlsat": Logic-LM's AR-LSAT programs (SatLM's Z3 DSL: `# Declarations` / `# Constraints`
  / `# Options`) -> SMT-LIB; the answer is the first option whose check passes.

This module only detects and dispatches: formats, aliases and the solver that runs each
are read from a `SolverRegistry` (`default_solvers()` unless one is passed), and that
solver's `run_format` translates and decides the program (the built-in translations are
in `kgreason.lkg.solvers.builtin`). Every built-in solver runs in the sandboxed subprocess
of `kgreason.lkg.solvers` under `limits`; no program text is executed in Python.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kgreason.lkg.solvers.base import ProgramFormatError, SolverLimits
from kgreason.lkg.solvers.protocol import ProgramOutcome, RunContext
from kgreason.lkg.solvers.registry import SolverRegistry, default_solvers
from kgreason.lkg.solvers.sandbox import Sandbox

__all__ = ["ProgramOutcome", "detect_format", "formats", "normalize_format", "run_program"]

_HEADERS = ("# Declarations", "# Constraints", "# Options", "Variables:", "Constraints:",
            "Query:", "Domain:", "Premises:", "Conclusion:", "Facts:", "Rules:")  # fmt: skip
#: a fact or atom alone on its line (`^[^\S\n]*`: a match whose leading white space spans
#: lines also matches from the last line start, so this finds what `^\s*` did, linearly)
_ASP_FACT = re.compile(r"^[^\S\n]*[a-z]\w*(\([^()]*\))?\s*\.\s*$", re.M)


def formats(solvers: SolverRegistry | None = None) -> tuple[str, ...]:
    """The program formats `solvers` (the built-in ones by default) run."""
    return tuple((solvers or default_solvers()).format_routes())


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

    from kgreason.lkg.logiclm.z3py import looks_like_z3py  # lazily: it imports the solvers

    if looks_like_z3py(text):
        return "z3py"
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
    """The registered format a name or alias means (ProgramFormatError if none)."""
    reg = solvers or default_solvers()
    known = reg.format_routes()
    f = fmt.strip().lower()
    f = reg.aliases().get(f, f)
    if f not in known:
        raise ProgramFormatError(
            f"unknown program format {fmt!r}; use one of {list(known)}", kind="unknown_format"
        )
    return f


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
    """Detect (or take) the format and hand the program to the registered solver that
    runs it (its `run_format` translates and decides it). Parse problems come back as an
    outcome with status "parse_error" and `error_kind` naming the problem; only an unknown
    format raises ProgramFormatError. A format of a solver registered beyond the built-ins
    must be named (`fmt`): detection knows only the built-in formats."""
    reg = solvers or default_solvers()
    if fmt:
        fmt = normalize_format(fmt, reg)
    else:
        fmt = detect_format(text)
        if fmt not in reg.format_routes():
            raise ProgramFormatError(
                f"the program reads as {fmt!r}, which no registered solver runs",
                kind="unknown_format",
            )
    limits = limits or SolverLimits()
    ctx = RunContext(limits, sandbox or Sandbox(limits), question, options, dataset)
    return reg.for_format(fmt).run_format(fmt, text, ctx)
