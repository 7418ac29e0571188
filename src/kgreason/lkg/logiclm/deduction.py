"""Logic-LM's LogicalDeduction constraint programs -> SMT-LIB 2 -> Z3 (sandboxed).

Format (Logic-LM, written for python-constraint):

    Domain:
    1: leftmost
    5: rightmost
    Variables:
    green_book [IN] [1, 2, 3, 4, 5]
    Constraints:
    blue_book == 4 ::: The blue book is the second from the right.
    yellow_book > blue_book ::: ...
    AllDifferentConstraint([green_book, blue_book]) ::: ...
    Query:
    A) green_book == 2 ::: The green book is the second from the left.

Each variable ranges over its integer list; each constraint is a Python comparison
expression (`==`, `!=`, `<`, ... chained as in Python, `+ - * // %`, `abs()`, `and`/`or`/
`not`, `x in [..]`) or `AllDifferentConstraint([...])`. The gloss after `:::` is ignored.

Answer semantics, as in Logic-LM's `CSP_Program.answer_mapping`: the first option (in
order) whose statement holds in *every* solution of the constraints. Differences: Logic-LM
reads an option only as `var == <digits>` (so `x == 7 - 3` became `x == 7`); we evaluate
the whole option expression. Constraints with no solution give error_kind "no_solution"
(Logic-LM: an empty solution list, no answer); no option holding in all solutions gives
letter None with error_kind "no_option" (Logic-LM: None). The Domain: section (labels) is
required, as by Logic-LM, but not interpreted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgreason.lkg.logiclm.pyexpr import Node, parse_expr
from kgreason.lkg.logiclm.smtquery import ChoiceOutcome, run_queries
from kgreason.lkg.solvers.base import ProgramFormatError, SolverResult
from kgreason.lkg.solvers.z3 import Z3Runner

SECTIONS = ("Domain:", "Variables:", "Constraints:", "Query:")
_VAR = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*\[IN\]\s*\[(?P<dom>.*)\]$")
_OPTION = re.compile(r"^\(?(?P<letter>[A-Za-z])\)\s*(?P<expr>.+)$")
_CMP = {"==": "=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}
_ARITH = {"+": "+", "-": "-", "*": "*", "//": "div", "%": "mod"}


@dataclass
class DeductionProgram:
    variables: dict[str, list[int]]
    #: (line number, source text, SMT-LIB Bool term)
    constraints: list[tuple[int, str, str]]
    #: (letter, source text, SMT-LIB Bool term)
    options: list[tuple[str, str, str]]

    def declarations(self) -> list[str]:
        out = []
        for name, dom in self.variables.items():
            v = sym(name)
            out.append(f"(declare-const {v} Int)")
            out.append(f"(assert (or {' '.join(f'(= {v} {_int(d)})' for d in dom)}))")
        return out


def sym(name: str) -> str:
    """Prefix user names so none can clash with SMT-LIB / Z3 built-ins (abs, div, ...)."""
    return f"v_{name}"


def _int(n: int) -> str:
    return str(n) if n >= 0 else f"(- {-n})"


def split_sections(text: str) -> dict[str, list[tuple[int, str]]]:
    """Section header -> [(line number, statement without gloss)]. Raises on a missing or
    repeated header (Logic-LM's `str.split(keyword)` fails the same way)."""
    found: dict[str, list[tuple[int, str]]] = {}
    current: str | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split(":::")[0].strip()
        header = next((s for s in SECTIONS if line.startswith(s)), None)
        if header:
            if header in found:
                raise ProgramFormatError(f"section {header!r} repeated", kind="bad_section", line=n)
            found[header] = []
            current, line = header, line[len(header) :].strip()
        if line and current:
            found[current].append((n, line))
    for s in SECTIONS:
        if s not in found:
            raise ProgramFormatError(f"missing section {s!r}", kind="missing_section")
    return found


class _Translator:
    def __init__(self, variables: dict[str, list[int]]):
        self.vars = variables

    def bool_term(self, node: Node) -> str:
        term, typ = self.term(node)
        if typ != "Bool":
            raise ProgramFormatError(f"{node} is a number, not a condition", kind="type_error")
        return term

    def int_term(self, node: Node) -> str:
        term, typ = self.term(node)
        if typ != "Int":
            raise ProgramFormatError(f"{node} is a condition, not a number", kind="type_error")
        return term

    def term(self, node: Node) -> tuple[str, str]:
        k = node.kind
        if k == "num":
            return node.value, "Int"
        if k == "bool":
            return node.value.lower(), "Bool"
        if k == "name":
            if node.value not in self.vars:
                raise ProgramFormatError(
                    f"undeclared variable {node.value!r}", kind="undeclared_name"
                )
            return sym(node.value), "Int"
        if k in ("and", "or"):
            return f"({k} {' '.join(self.bool_term(a) for a in node.args)})", "Bool"
        if k == "not":
            return f"(not {self.bool_term(node.args[0])})", "Bool"
        if k == "cmp":
            return self.compare(node), "Bool"
        if k == "bin":
            if node.value not in _ARITH:
                raise ProgramFormatError(
                    f"unsupported operator {node.value!r} in {node}", kind="unsupported_operator"
                )
            a, b = (self.int_term(x) for x in node.args)
            return f"({_ARITH[node.value]} {a} {b})", "Int"
        if k == "unary" and node.value in "+-":
            t = self.int_term(node.args[0])
            return (t if node.value == "+" else f"(- {t})"), "Int"
        if k == "call" and node.value == "abs" and len(node.args) == 1:
            return f"(abs {self.int_term(node.args[0])})", "Int"
        if k in ("in", "notin") and node.args[1].kind == "list":
            x = self.int_term(node.args[0])
            alts = " ".join(f"(= {x} {self.int_term(a)})" for a in node.args[1].args)
            t = f"(or false {alts})"
            return (t if k == "in" else f"(not {t})"), "Bool"
        what = f"function {node.value}()" if k == "call" else f"{k} expression"
        raise ProgramFormatError(f"unsupported {what}: {node}", kind="unsupported_construct")

    def compare(self, node: Node) -> str:
        parts = []
        for op, a, b in zip(node.ops, node.args, node.args[1:], strict=False):
            (ta, ya), (tb, yb) = self.term(a), self.term(b)
            if ya != yb:
                raise ProgramFormatError(f"comparing {a} with {b}", kind="type_error")
            if op == "!=":
                parts.append(f"(not (= {ta} {tb}))")
            elif op == "==" or ya == "Int":
                parts.append(f"({_CMP[op]} {ta} {tb})")
            else:
                raise ProgramFormatError(f"ordering conditions in {node}", kind="type_error")
        return parts[0] if len(parts) == 1 else f"(and {' '.join(parts)})"

    def constraint(self, text: str) -> str:
        node = parse_expr(text)
        if node.kind == "call" and node.value == "AllDifferentConstraint":
            if len(node.args) != 1 or node.args[0].kind != "list":
                raise ProgramFormatError(
                    "AllDifferentConstraint takes one list", kind="unsupported_construct"
                )
            items = [self.int_term(a) for a in node.args[0].args]
            return f"(distinct {' '.join(items)})" if len(items) > 1 else "true"
        return self.bool_term(node)


def _where(exc: ProgramFormatError, line: int, what: str) -> ProgramFormatError:
    return ProgramFormatError(f"{what}: {exc}", kind=exc.kind, line=line)


def parse_deduction(text: str) -> DeductionProgram:
    """Program text -> DeductionProgram with SMT-LIB terms; ProgramFormatError names the line."""
    sec = split_sections(text)
    variables: dict[str, list[int]] = {}
    for n, line in sec["Variables:"]:
        m = _VAR.match(line)
        if not m:
            raise ProgramFormatError(
                f"cannot read variable {line!r} (expected 'name [IN] [1, 2, ...]')",
                kind="bad_variable", line=n,
            )  # fmt: skip
        items = [x.strip() for x in m["dom"].split(",") if x.strip()]
        if not items or not all(re.fullmatch(r"-?\d+", x) for x in items):
            raise ProgramFormatError(
                f"domain of {m['name']!r} must be a list of integers, got [{m['dom']}]",
                kind="non_integer_domain", line=n,
            )  # fmt: skip
        variables[m["name"]] = [int(x) for x in items]
    if not variables:
        raise ProgramFormatError("no variables declared", kind="missing_section")
    tr = _Translator(variables)
    constraints = []
    for n, line in sec["Constraints:"]:
        try:
            constraints.append((n, line, tr.constraint(line)))
        except ProgramFormatError as e:
            raise _where(e, n, "constraint") from e
    options = []
    for n, line in sec["Query:"]:
        m = _OPTION.match(line)
        if not m:
            raise ProgramFormatError(f"cannot read option {line!r}", kind="bad_option", line=n)
        try:
            options.append((m["letter"].upper(), m["expr"], tr.bool_term(parse_expr(m["expr"]))))
        except ProgramFormatError as e:
            raise _where(e, n, f"option {m['letter']}") from e
    if not options:
        raise ProgramFormatError("empty Query: section", kind="missing_section")
    return DeductionProgram(variables, constraints, options)


def run_deduction(text: str, *, runner: Z3Runner | None = None) -> ChoiceOutcome:
    """Parse, translate and solve; the letter follows Logic-LM's all-solutions semantics."""
    try:
        prog = parse_deduction(text)
    except ProgramFormatError as e:
        res = SolverResult("z3", "parse_error", error_kind="parse_error", error=str(e))
        res.details["kind"] = e.kind
        return ChoiceOutcome(None, res, error_kind=e.kind, error=str(e))
    decls = prog.declarations()
    premises = [c[2] for c in prog.constraints]
    queries = [f"(not {o[2]})" for o in prog.options]
    res, base, verdicts = run_queries(runner or Z3Runner(), decls, premises, queries)
    out = ChoiceOutcome(None, res, smt=res.program)
    if not res.ok:
        out.error_kind, out.error = res.error_kind, res.error
        return out
    if base != "sat":
        out.error_kind = "no_solution" if base == "unsat" else "solver_unknown"
        out.error = f"the constraints have no solution (z3: {base})"
        return out
    out.per_option = {o[0]: v == "unsat" for o, v in zip(prog.options, verdicts, strict=True)}
    chosen = [k for k, ok in out.per_option.items() if ok]
    if chosen:
        out.letter = res.answer = chosen[0]
        if len(chosen) > 1:
            out.notes.append(f"options {chosen} all hold in every solution; first taken")
    else:
        out.error_kind, out.error = "no_option", "no option holds in every solution"
    res.details["selected"] = chosen
    return out
