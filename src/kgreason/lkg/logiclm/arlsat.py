"""Logic-LM's AR-LSAT programs (SatLM's Z3 DSL) -> SMT-LIB 2 -> Z3 in the sandbox.

Format:

    # Declarations
    people = EnumSort([Vladimir, Wendy])
    meals = EnumSort([breakfast, lunch, dinner, snack])
    eats = Function([people, meals] -> [foods])
    # Constraints
    ForAll([m:meals], eats(Vladimir, m) != eats(Wendy, m)) ::: gloss
    # Options
    Question ::: Vladimir must eat which one of the following foods?
    is_valid(Exists([m:meals], eats(Vladimir, m) == fish)) ::: (A)

Declarations, as Logic-LM's `LSAT_Z3_Program` reads them: an EnumSort whose members are
all digits is an integer list (functions into it get the range constraint lo <= f <= hi);
an EnumSort whose members were already declared is a sub-list of that sort (usable as a
scope, not as a function sort); `IntSort([a, b])` declares integer constants;
`Function([s1, s2] -> [r])` (also `Function(s1, s2 -> r)` and `Function(s1, s2, r)`) with
sorts, `int` or `bool`. Declaration lines that are neither Sort nor Function are ignored,
as Logic-LM ignores them (noted). Constraints: see `arlsat_expr`.

Options (positional letters A-E, `Question` lines skipped): Python-level checks against
the constraints, exactly as Logic-LM defines them: `is_valid(F)` (constraints ∧ ¬F unsat),
`is_sat(F)` (constraints ∧ F sat), `is_unsat(F)`, `is_accurate_list([F...])` (valid
disjunction and each satisfiable), `is_exception(P)` = not P, and `not`/`and`/`or` of
those. The answer is the first option whose check passes; none passing is Logic-LM's "No
Output" execution error (error_kind "no_output"). Z3 "unknown" fails every check, as
`solver.check() == sat/unsat` does in Python.

Anything outside the DSL raises `ProgramFormatError` naming the construct and line (kinds:
syntax, unsupported_operator, unsupported_construct, unknown_function, undeclared_name,
undeclared_sort, type_error, arity, bad_scope, bad_declaration, bad_option, missing_section).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgreason.lkg.logiclm.arlsat_expr import Env, Translator, Val
from kgreason.lkg.logiclm.pyexpr import Node, parse_expr
from kgreason.lkg.logiclm.smtquery import ChoiceOutcome, run_queries
from kgreason.lkg.solvers.base import ProgramFormatError, SolverResult
from kgreason.lkg.solvers.z3 import Z3Runner

HEADERS = ("# Declarations", "# Constraints", "# Options")
LETTERS = "ABCDE"
_SORT = re.compile(r"^(?P<name>\w+)\s*=\s*(?P<kind>EnumSort|IntSort)\(\s*\[(?P<m>.*)\]\s*\)$")
_FUNC = re.compile(r"^(?P<name>\w+)\s*=\s*Function\((?P<body>.*)\)$")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_QUESTION = re.compile(r"^Question\s*(:::|:)")

#: PyBool: ("q", query index, wanted verdict) | ("not", x) | ("and"/"or", [..]) | ("const", b)
PyBool = tuple


@dataclass
class ArlsatProgram:
    decls: list[str]
    premises: list[str]
    queries: list[str]
    #: (letter, source text, PyBool)
    options: list[tuple[str, str, PyBool]]
    notes: list[str] = field(default_factory=list)


def _sections(text: str) -> dict[str, list[tuple[int, str]]]:
    found: dict[str, list[tuple[int, str]]] = {}
    current = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line in HEADERS:
            current = line
            found.setdefault(line, [])
        elif line and current:
            found[current].append((n, line))
    for h in HEADERS:
        if h not in found:
            raise ProgramFormatError(f"missing section {h!r}", kind="missing_section")
    return found


def _fail(msg: str, kind: str, line: int) -> ProgramFormatError:
    return ProgramFormatError(msg, kind=kind, line=line)


class _Builder:
    def __init__(self) -> None:
        self.env = Env()
        self.decls: list[str] = []
        self.premises: list[str] = []
        self.int_lists: set[str] = set()
        self.declared: set[str] = set()

    def sort_type(self, name: str, line: int) -> str:
        if name in ("int", "bool"):
            return name.capitalize()
        if name in self.int_lists:
            return "Int"
        if name in self.env.sorts:
            return name
        kind = "undeclared_sort"
        why = "a sub-list, not a sort" if name in self.env.sublists else "not a declared sort"
        raise _fail(f"{name!r} in a Function signature is {why}", kind, line)

    def smt_sort(self, typ: str) -> str:
        return typ if typ in ("Int", "Bool") else f"S_{typ}"

    def sort(self, n: int, m: re.Match[str]) -> None:
        name, members = m["name"], [x.strip() for x in m["m"].split(",") if x.strip()]
        if not members:
            raise _fail(f"{name}: empty member list", "bad_declaration", n)
        if name in ("Int", "Bool") or name in self.env.lists:
            raise _fail(f"{name!r} declared twice or reserved", "bad_declaration", n)
        if m["kind"] == "IntSort" or all(x.isdigit() for x in members):
            if all(x.isdigit() for x in members):
                self.env.lists[name] = [Val("Int", str(int(x))) for x in members]
                self.int_lists.add(name)
                return
            for x in members:
                if not _IDENT.match(x):
                    raise _fail(f"IntSort member {x!r} is not a name", "bad_declaration", n)
                self.decls.append(f"(declare-const i_{x} Int)")
                self.env.constants[x] = Val("Int", f"i_{x}")
            self.env.lists[name] = [self.env.constants[x] for x in members]
            return
        bad = [x for x in members if not _IDENT.match(x)]
        if bad:
            raise _fail(f"EnumSort member {bad[0]!r} is not a name", "bad_declaration", n)
        if all(x not in self.declared for x in members):
            if len(set(members)) != len(members):
                raise _fail(f"{name}: repeated member", "bad_declaration", n)
            self.env.sorts[name] = members
            self.declared.update(members)
            ctors = " ".join(f"(c_{x})" for x in members)
            self.decls.append(f"(declare-datatype S_{name} ({ctors}))")
            for x in members:
                self.env.constants[x] = Val(name, f"c_{x}")
            self.env.lists[name] = [self.env.constants[x] for x in members]
            return
        missing = [x for x in members if x not in self.env.constants]
        if missing:
            raise _fail(f"sub-list {name}: undeclared member {missing[0]!r}", "undeclared_name", n)
        self.env.sublists.add(name)
        self.env.lists[name] = [self.env.constants[x] for x in members]

    def function(self, n: int, m: re.Match[str]) -> None:
        name, body = m["name"], m["body"]
        parts = body.replace("->", ",").replace("[", "").replace("]", "").split(",")
        args = [p.strip() for p in parts]
        if any(not _IDENT.match(a) for a in args) or not args:
            raise _fail(f"cannot read Function signature {body!r}", "bad_declaration", n)
        types = [self.sort_type(a, n) for a in args]
        params, result = types[:-1], types[-1]
        if name in self.env.functions:
            raise _fail(f"function {name!r} declared twice", "bad_declaration", n)
        self.env.functions[name] = (params, result)
        sig = " ".join(self.smt_sort(t) for t in params)
        self.decls.append(f"(declare-fun f_{name} ({sig}) {self.smt_sort(result)})")
        if args[-1] in self.int_lists:
            self.range_constraint(n, name, args)

    def range_constraint(self, n: int, name: str, args: list[str]) -> None:
        """Logic-LM's extra `ForAll(args, lo <= f(args) <= hi)` for integer-list ranges."""
        values = [int(v.smt) for v in self.env.lists[args[-1]]]
        if values[-1] - values[0] != len(values) - 1:
            raise _fail(f"range {args[-1]} of {name} is not contiguous", "bad_declaration", n)
        scope = ", ".join(f"a{i}:{a}" for i, a in enumerate(args[:-1]))
        call = f"{name}({', '.join(f'a{i}' for i in range(len(args) - 1))})"
        bound = f"And({values[0]} <= {call}, {call} <= {values[-1]})"
        text = f"ForAll([{scope}], {bound})" if scope else bound
        self.premises.append(Translator(self.env).formula(parse_expr(text)))


def _option(node: Node, tr: Translator, queries: dict[str, int]) -> PyBool:
    def query(term: str, want: str) -> PyBool:
        idx = queries.setdefault(term, len(queries))
        return ("q", idx, want)

    k, f = node.kind, node.value
    if k == "bool":
        return ("const", f == "True")
    if k == "not":
        return ("not", _option(node.args[0], tr, queries))
    if k in ("and", "or"):
        return (k, [_option(a, tr, queries) for a in node.args])
    if k != "call" or not f.startswith("is_"):
        raise ProgramFormatError(
            f"an option must be a check such as is_valid(...), got {node}", kind="bad_option"
        )
    if len(node.args) != 1:
        raise ProgramFormatError(f"{f} takes one argument: {node}", kind="arity")
    (arg,) = node.args
    if f == "is_exception":
        return ("not", _option(arg, tr, queries))
    if f == "is_valid":
        return query(f"(not {tr.formula(arg)})", "unsat")
    if f in ("is_sat", "is_unsat"):
        return query(tr.formula(arg), "sat" if f == "is_sat" else "unsat")
    if f == "is_accurate_list":
        if arg.kind != "list":
            raise ProgramFormatError(f"is_accurate_list needs a [list]: {node}", kind="bad_option")
        items = [tr.formula(a) for a in arg.args]
        valid = query(f"(not (or false {' '.join(items)}))", "unsat")
        return ("and", [valid, *(query(t, "sat") for t in items)])
    raise ProgramFormatError(f"unsupported option check {f}()", kind="unknown_function")


def parse_arlsat(text: str) -> ArlsatProgram:
    """Program text -> SMT-LIB declarations, premises and option checks."""
    sec = _sections(text)
    b = _Builder()
    for n, line in sec["# Declarations"]:
        stmt = line.split(":::")[0].strip()
        if "Sort" not in stmt and "Function" not in stmt:
            b.env.note(f"line {n}: declaration-section statement ignored (as Logic-LM): {stmt}")
            continue
        if m := _SORT.match(stmt):
            b.sort(n, m)
        elif m := _FUNC.match(stmt):
            b.function(n, m)
        else:
            raise _fail(f"unknown declaration {stmt!r}", "bad_declaration", n)
    tr = Translator(b.env)
    for n, line in sec["# Constraints"]:
        try:
            node = parse_expr(line.split(":::")[0])
            tr.declare_binders(node)
            b.premises.append(tr.formula(node))
        except ProgramFormatError as e:
            raise _fail(f"constraint: {e}", e.kind, n) from e
    queries: dict[str, int] = {}
    options: list[tuple[str, str, PyBool]] = []
    lines = [(n, ln) for n, ln in sec["# Options"] if not _QUESTION.match(ln)]
    for letter, (n, line) in zip(LETTERS, lines, strict=False):
        src = line.split(":::")[0].strip()
        try:
            node = parse_expr(src)
            tr.declare_binders(node)
            options.append((letter, src, _option(node, tr, queries)))
        except ProgramFormatError as e:
            raise _fail(f"option {letter}: {e}", e.kind, n) from e
    if not options:
        raise ProgramFormatError("no options", kind="missing_section")
    decls = b.decls + tr.global_decls
    return ArlsatProgram(decls, b.premises, list(queries), options, b.env.notes)


def evaluate(p: PyBool, verdicts: list[str]) -> bool:
    if p[0] == "q":
        return verdicts[p[1]] == p[2]
    if p[0] == "not":
        return not evaluate(p[1], verdicts)
    if p[0] == "and":
        return all(evaluate(x, verdicts) for x in p[1])
    if p[0] == "or":
        return any(evaluate(x, verdicts) for x in p[1])
    return bool(p[1])


def run_arlsat(text: str, *, runner: Z3Runner | None = None) -> ChoiceOutcome:
    """Parse, translate, run the checks; the letter is the first option that passes."""
    try:
        prog = parse_arlsat(text)
    except ProgramFormatError as e:
        res = SolverResult("z3", "parse_error", error_kind="parse_error", error=str(e))
        res.details["kind"] = e.kind
        return ChoiceOutcome(None, res, error_kind=e.kind, error=str(e))
    res, base, verdicts = run_queries(runner or Z3Runner(), prog.decls, prog.premises, prog.queries)
    out = ChoiceOutcome(None, res, smt=res.program, notes=list(prog.notes))
    if not res.ok:
        out.error_kind, out.error = res.error_kind, res.error
        return out
    if base != "sat":
        out.notes.append(f"the constraints alone are {base}")
    if "unknown" in verdicts:
        out.notes.append("z3 answered unknown for some checks (they fail, as in Logic-LM)")
    out.per_option = {letter: evaluate(p, verdicts) for letter, _, p in prog.options}
    passed = [k for k, ok in out.per_option.items() if ok]
    res.details["selected"] = passed
    if passed:
        out.letter = res.answer = passed[0]
    else:
        out.error_kind, out.error = "no_output", "no option passed its check (Logic-LM: No Output)"
    return out
