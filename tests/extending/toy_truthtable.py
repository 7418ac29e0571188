"""A toy solver for the "add a solver" recipe (CONTRIBUTING.md): a truth-table engine for
propositional logic. It really decides entailment, by enumerating every assignment, and
never evaluates the program as Python: a small recursive-descent parser reads it.

Program format "truthtable":

    Premises:
    rain -> wet
    rain
    Goal: wet

Connectives: ~ & | -> <-> and parentheses. Verdict: True if the goal holds in every model
of the premises, False if its negation does, Unknown otherwise (as Prover9 decides FOLIO).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kgreason.lkg.solvers import (
    ProgramOutcome,
    RunContext,
    Sandbox,
    SolverResult,
    outcome_of_run,
)
from kgreason.lkg.solvers.preflight import EngineCheck

MAX_ATOMS = 12  # 4,096 rows: the engine's own resource bound
MAX_DEPTH = 50
_TOKEN = re.compile(r"\s*(<->|->|[~&|()]|[a-z_][a-z0-9_]*)")
Formula = Callable[[Mapping[str, bool]], bool]

PROMPT = """Write the problem below as a propositional truth-table program: a `Premises:`
line, one formula per line (atoms in lower case; ~ & | -> <-> and parentheses), then
`Goal: <formula>`. Put the program in one fenced code block.
Question: $question
Options: $options
Facts and rules:
$logfile
Context: $context
"""


class TTError(ValueError):
    pass


def _parse(text: str, atoms: set[str]) -> Formula:
    pos, toks = 0, []
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise TTError(f"unexpected {text[pos : pos + 10]!r}")
        toks.append(m.group(1))
        pos = m.end()
    i = 0

    def peek() -> str | None:
        return toks[i] if i < len(toks) else None

    def take() -> str:
        nonlocal i
        if i >= len(toks):
            raise TTError("formula ends too early")
        i += 1
        return toks[i - 1]

    def binary(depth: int, ops: tuple[str, ...], sub: Callable[[int], Formula]) -> Formula:
        left = sub(depth)
        while peek() in ops:
            op, right, lhs = take(), sub(depth), left
            fns = {
                "&": lambda v, a=lhs, b=right: a(v) and b(v),
                "|": lambda v, a=lhs, b=right: a(v) or b(v),
                "->": lambda v, a=lhs, b=right: (not a(v)) or b(v),
                "<->": lambda v, a=lhs, b=right: a(v) == b(v),
            }
            left = fns[op]
        return left

    def unary(depth: int) -> Formula:
        if depth > MAX_DEPTH:
            raise TTError(f"nested deeper than {MAX_DEPTH}")
        t = take()
        if t == "~":
            inner = unary(depth + 1)
            return lambda v: not inner(v)
        if t == "(":
            inner = expr(depth + 1)
            if take() != ")":
                raise TTError("missing )")
            return inner
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", t):
            raise TTError(f"unexpected {t!r}")
        atoms.add(t)
        return lambda v: v[t]

    def expr(depth: int) -> Formula:
        def conj(d: int) -> Formula:
            return binary(d, ("&",), unary)

        def disj(d: int) -> Formula:
            return binary(d, ("|",), conj)

        def imp(d: int) -> Formula:
            return binary(d, ("->",), disj)

        return binary(depth, ("<->",), imp)

    f = expr(0)
    if peek() is not None:
        raise TTError(f"unexpected {peek()!r}")
    return f


def decide(program: str) -> str:
    """'True', 'False' or 'Unknown'; TTError names what cannot be read or is too big."""
    body, sep, goal = program.partition("Goal:")
    if not sep or "Premises:" not in body:
        raise TTError("expected a 'Premises:' section and a 'Goal:' line")
    atoms: set[str] = set()
    lines = [ln for ln in body.split("Premises:", 1)[1].splitlines() if ln.strip()]
    premises = [_parse(ln, atoms) for ln in lines]
    g = _parse(goal, atoms)
    if len(atoms) > MAX_ATOMS:
        raise TTError(f"{len(atoms)} atoms: the truth table allows at most {MAX_ATOMS}")
    names = sorted(atoms)
    models = [
        v
        for bits in itertools.product((False, True), repeat=len(names))
        if all(p(v := dict(zip(names, bits, strict=True))) for p in premises)
    ]
    if models and all(g(v) for v in models):
        return "True"
    if models and not any(g(v) for v in models):
        return "False"
    return "Unknown" if models else "Inconsistent"


@dataclass(frozen=True)
class TruthTableSolver:
    name: str = "truthtable"
    label: str = "truth table (propositional)"
    engine: str = "truthtable"
    route_words: tuple[str, ...] = ("TRUTHTABLE",)
    formats: tuple[str, ...] = ("truthtable",)
    aliases: Mapping[str, str] = field(default_factory=lambda: {"tt": "truthtable"})

    def codegen_prompt(self) -> str:
        return PROMPT

    def preflight(self, sandbox: Sandbox) -> EngineCheck:
        return EngineCheck(self.engine, "ok", "in-process, no program execution", False)

    def version(self, sandbox: Sandbox) -> str:
        return "truthtable 1 (in-process)"

    def run(self, program: str, ctx: RunContext) -> SolverResult:
        try:
            verdict = decide(program)
        except (TTError, RecursionError) as e:
            return SolverResult(self.name, "parse_error", error_kind="parse_error", error=str(e))
        if verdict == "Inconsistent":
            return SolverResult(
                self.name, "solver_error", error_kind="solver_error",
                error="the premises are inconsistent", program=program,
            )  # fmt: skip
        return SolverResult(self.name, "ok", verdict=verdict, answer=verdict, program=program)

    def run_format(self, fmt: str, text: str, ctx: RunContext) -> ProgramOutcome:
        # its one format is the program `run` decides: the generic outcome, whose
        # True/False/Unknown verdict is read as the option letter
        return outcome_of_run(self, fmt, text, ctx)
