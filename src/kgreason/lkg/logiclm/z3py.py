"""The SymbolLKG paper's Z3 programs (prompt A.2, Figure 4; Appendix B, Figure 7): Python
that calls the Z3 API, read as data and turned into kgreason's SMT-LIB codegen convention.

    from z3 import *
    def solve_problem():
        year_computer_1 = Int('year_computer_1')        # PART 1: variables
        s = Solver()                                     # PART 2
        s.add(year_computer_1 <= year_printer_1)         # PART 3-4: facts, relationships
        option_A = Bool('option_A')                      # PART 5: question logic
        s.add(option_A == (year_computer_2 == 1987))
        result = s.check()                               # PART 6-7: solve, judge
        ...

The paper runs this Python; kgreason runs none of it. Declarations (`Int`/`Bool` and
`Ints`/`Bools`), integer constants (`COUNTRY_INDIA = 1`, the A.2 example's encoding) and
`s.add(...)` assertions are read with the expression parser of the Logic-LM front-ends
(`pyexpr`, `arlsat_expr`); everything from `s.check()` on is the paper's "Python Judge
Code" and is skipped, since kgreason composes the checks itself
(`kgreason.lkg.solvers.conventions`). A Bool bound once by `s.add(b == (...))` is that
definition: `option_A` ... become the per-option terms, and without options a definition
named `goal` / `answer` (else the last one, PART 5's question variable) is the goal.
Lines with the paper's elisions (`...`, `(... more constraints...)`) are skipped with a
note. Any other statement is a ProgramFormatError naming the line, for the repair loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgreason.lkg.logiclm.arlsat_expr import Env, Translator, Val
from kgreason.lkg.logiclm.pyexpr import Node, parse_expr
from kgreason.lkg.solvers.base import ProgramFormatError

_IDENT = r"[A-Za-z_]\w*"
_DECL = re.compile(rf"^({_IDENT})\s*=\s*(Int|Bool)\(\s*['\"]([^'\"]*)['\"]\s*\)$")
_DECLS = re.compile(
    rf"^({_IDENT}(?:\s*,\s*{_IDENT})*)\s*,?\s*=\s*(Ints|Bools)\(\s*['\"]([^'\"]*)['\"]\s*\)$"
)
_CONST = re.compile(rf"^({_IDENT})\s*=\s*(-?\d+)$")
_ADD = re.compile(rf"^{_IDENT}\.add\((.*)\)$", re.S)
_SOLVER = re.compile(rf"^{_IDENT}\s*=\s*(Solver|Optimize|SolverFor)\(.*\)$")
_CHECK = re.compile(rf"^(?:{_IDENT}\s*=\s*)?{_IDENT}\.check\(\s*\)$")
_SKIP = re.compile(r"^(from\s+z3\s+import|import\s+z3|def\s+\w+\s*\(.*\)\s*:|if\s+__name__)")
_ELIDED = re.compile(
    r"\.\.\.|…|\b(omitted|more \w+ (encoded|created|encoding)|the same encoding)\b", re.I
)
_OPTION = re.compile(r"^opt(?:ion)?_?([A-Za-z])$", re.I)


def looks_like_z3py(text: str) -> bool:
    """Is the program the paper's Z3 Python (an import of z3 or a Solver() with adds)?"""
    return (
        "from z3 import" in text or "import z3" in text or ("Solver()" in text and ".add(" in text)
    )


@dataclass
class Z3PyProgram:
    """What a Z3 Python program says, as SMT-LIB pieces."""

    decls: list[str] = field(default_factory=list)
    asserts: list[str] = field(default_factory=list)
    #: Bool name -> its defining term (`s.add(b == (...))`)
    definitions: dict[str, str] = field(default_factory=dict)
    #: option letter -> definition name
    options: dict[str, str] = field(default_factory=dict)
    goal: str | None = None
    notes: list[str] = field(default_factory=list)

    def smtlib(self) -> str:
        """The program in kgreason's SMT-LIB convention (goal or option definitions)."""
        lines = [*self.decls, *(f"(assert {a})" for a in self.asserts)]
        for name, term in self.definitions.items():
            out = "goal" if name == self.goal and name.lower() != "goal" else name
            lines.append(f"(define-fun {out} () Bool {term})")
        return "\n".join(lines) + "\n"


def _uncomment(line: str) -> str:
    """The line without its `#` comment (a `#` inside a quoted string is kept)."""
    quote = ""
    for i, c in enumerate(line):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#":
            return line[:i]
    return line


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(line number, statement): comments dropped, bracketed continuations joined."""
    out: list[tuple[int, str]] = []
    buf, start, depth = "", 0, 0
    for n, raw in enumerate(text.split("\n"), 1):
        line = _uncomment(raw).strip()
        if not line and not buf:
            continue
        if not buf:
            start = n
        buf = f"{buf} {line}".strip()
        depth += sum(line.count(c) for c in "([") - sum(line.count(c) for c in ")]")
        if depth <= 0:
            out.append((start, buf))
            buf, depth = "", 0
    if buf:
        out.append((start, buf))
    return out


def _split_args(inner: str) -> list[Node]:
    node = parse_expr(f"[{inner}]")
    return list(node.args)


def parse_z3py(text: str) -> Z3PyProgram:
    """Read a Z3 Python program (see the module docstring); ProgramFormatError on a
    statement outside the subset (kind and line in the message)."""
    p = Z3PyProgram()
    env = Env()
    tr = Translator(env)
    bools: set[str] = set()
    pending: list[tuple[int, str, Node]] = []  # (line, name, term) candidate definitions
    for n, stmt in _logical_lines(text):
        if _CHECK.match(stmt):
            p.notes.append(f"line {n}: from s.check() on, the judge code is skipped (kgreason "
                           "composes the checks)")  # fmt: skip
            break
        if _SKIP.match(stmt) or _SOLVER.match(stmt):
            continue
        try:
            if m := _DECL.match(stmt):
                _declare(p, env, bools, [m.group(1)], m.group(2))
            elif m := _DECLS.match(stmt):
                names = [x.strip() for x in m.group(1).split(",") if x.strip()]
                _declare(p, env, bools, names, m.group(2)[:-1])
            elif m := _CONST.match(stmt):
                v = m.group(2)
                env.constants[m.group(1)] = Val("Int", f"(- {v[1:]})" if v[0] == "-" else v)
            elif m := _ADD.match(stmt):
                for arg in _split_args(m.group(1)):
                    name = _definition(arg, bools)
                    if name is not None:
                        pending.append((n, name, arg.args[1]))
                    else:
                        p.asserts.append(tr.formula(arg))
            elif _ELIDED.search(stmt):
                p.notes.append(f"line {n}: elided in the program, skipped: {stmt[:80]}")
            else:
                raise ProgramFormatError(f"unsupported statement {stmt[:120]!r}", kind="syntax")
        except ProgramFormatError as e:
            raise ProgramFormatError(f"line {n}: {e}", kind=e.kind) from e
    _bind_definitions(p, tr, pending)
    p.notes += env.notes
    return p


def _declare(p: Z3PyProgram, env: Env, bools: set[str], names: list[str], sort: str) -> None:
    for name in names:
        env.constants[name] = Val(sort, name)
        p.decls.append(f"(declare-const {name} {sort})")
        if sort == "Bool":
            bools.add(name)


def _definition(arg: Node, bools: set[str]) -> str | None:
    """`b == (term)` with b a declared Bool: the name it defines."""
    if arg.kind == "cmp" and arg.ops == ("==",) and arg.args[0].kind == "name":
        name = arg.args[0].value
        return name if name in bools else None
    return None


def _mentions(node: Node, name: str) -> bool:
    stack = [node]
    while stack:
        x = stack.pop()
        if x.kind == "name" and x.value == name:
            return True
        stack.extend(x.args)
    return False


def _bind_definitions(p: Z3PyProgram, tr: Translator, pending: list[tuple[int, str, Node]]) -> None:
    """A Bool defined exactly once becomes a define-fun (its declare-const dropped); one
    defined twice stays an assertion of each equation."""
    counts: dict[str, int] = {}
    for _, name, _t in pending:
        counts[name] = counts.get(name, 0) + 1
    for n, name, term in pending:
        try:
            if (
                counts[name] > 1
                or _mentions(term, name)
                or any(name in a.split() for a in p.asserts)
            ):
                p.asserts.append(f"(= {name} {tr.formula(term)})")
                continue
            p.definitions[name] = tr.formula(term)
        except ProgramFormatError as e:
            raise ProgramFormatError(f"line {n}: {e}", kind=e.kind) from e
        p.decls = [d for d in p.decls if d != f"(declare-const {name} Bool)"]
        if m := _OPTION.match(name):
            p.options[m.group(1).upper()] = name
    if not p.options and p.definitions:
        named = [d for d in p.definitions if d.lower() in ("goal", "answer")]
        p.goal = named[0] if named else list(p.definitions)[-1]
        if not named:
            p.notes.append(f"the question variable {p.goal!r} (the last Bool defined) is the goal")


def z3py_to_smtlib(text: str) -> tuple[str, list[str]]:
    """(SMT-LIB in the codegen convention, notes) of a Z3 Python program."""
    p = parse_z3py(text)
    return p.smtlib(), p.notes
