"""Typed translation of AR-LSAT DSL expressions (SatLM's Z3 flavour, as Logic-LM runs it)
into SMT-LIB 2 terms.

Values are Bool, Int or an enum sort. Scoped forms follow Logic-LM's `CodeTranslator`:
`ForAll/Exists([v:scope, ...], body)` over an enum sort or an integer list is a finite
conjunction/disjunction (equivalent to Z3's quantifier over a finite datatype, and always
decidable); over `int` it stays an SMT quantifier. `Count([v:scope, ...], e)` is the sum of
`e` (a Bool counts 1) over the scope; `Distinct([v:scope], e)` is `distinct` of the
instances. A Bool used as a number is 0/1, as z3py coerces it.

Readings where Logic-LM's Python would crash or silently compute something else (each is
recorded in `notes`): `and`/`or`/`not` and `&`/`|`/`~` on conditions are the logical
connectives, chained comparisons are conjunctions, `x in [..]` is membership, and a
quantifier over a sub-list (an EnumSort whose members belong to an earlier sort) ranges over
its members.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import product

from kgreason.lkg.logiclm.pyexpr import Node
from kgreason.lkg.solvers.base import ProgramFormatError

MAX_INSTANCES = 20000
_CMP = {"==": "=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}
_ARITH = {"+": "+", "-": "-", "*": "*", "/": "div", "//": "div", "%": "mod"}
_LOGIC = {"&": "and", "|": "or", "^": "xor"}


@dataclass(frozen=True)
class Val:
    """typ: "Bool", "Int" or the name of an enum sort."""

    typ: str
    smt: str


@dataclass
class Env:
    """Declarations visible to expressions."""

    #: enum sort name -> member names
    sorts: dict[str, list[str]] = field(default_factory=dict)
    #: list name -> member values (enum sorts, integer lists, sub-lists)
    lists: dict[str, list[Val]] = field(default_factory=dict)
    #: name -> (argument types, result type)
    functions: dict[str, tuple[list[str], str]] = field(default_factory=dict)
    #: enum constant / integer variable name -> value
    constants: dict[str, Val] = field(default_factory=dict)
    sublists: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def err(msg: str, kind: str) -> ProgramFormatError:
    return ProgramFormatError(msg, kind=kind)


def to_int(v: Val) -> str:
    if v.typ == "Int":
        return v.smt
    if v.typ == "Bool":
        return f"(ite {v.smt} 1 0)"
    raise err(f"{v.smt} of sort {v.typ} used as a number", "type_error")


class Translator:
    def __init__(self, env: Env):
        self.env = env
        self.fresh = 0
        self.size = 0

    # ---- entry points -------------------------------------------------------------------
    def formula(self, node: Node, scope: dict[str, Val] | None = None) -> str:
        v = self.value(node, scope or {})
        if isinstance(v, list):
            raise err(f"a list {node} is not a condition", "type_error")
        if v.typ != "Bool":
            raise err(f"{node} is a {v.typ}, not a condition", "type_error")
        return v.smt

    def value(self, node: Node, scope: dict[str, Val]) -> Val | list[Val]:
        self.size += 1
        if self.size > MAX_INSTANCES:
            raise err(f"expansion exceeds {MAX_INSTANCES} terms", "too_large")
        k = node.kind
        if k == "num":
            return Val("Int", node.value)
        if k == "bool":
            return Val("Bool", node.value.lower())
        if k == "name":
            return self.name(node.value, scope)
        if k == "list":
            return [self.scalar(a, scope) for a in node.args]
        if k == "call":
            return self.call(node, scope)
        if k in ("and", "or"):
            self.env.note(f"Python '{k}' read as logical {k}")
            return Val("Bool", f"({k} {' '.join(self.formula(a, scope) for a in node.args)})")
        if k == "not":
            self.env.note("Python 'not' read as logical negation")
            return Val("Bool", f"(not {self.formula(node.args[0], scope)})")
        if k == "cmp":
            return self.compare(node, scope)
        if k == "bin":
            return self.binary(node, scope)
        if k == "unary":
            a = self.scalar(node.args[0], scope)
            if node.value == "~" and a.typ == "Bool":
                return Val("Bool", f"(not {a.smt})")
            if node.value in "+-":
                return Val("Int", to_int(a) if node.value == "+" else f"(- {to_int(a)})")
            raise err(f"unsupported operator {node.value!r} in {node}", "unsupported_operator")
        if k in ("in", "notin"):
            item, coll = self.scalar(node.args[0], scope), self.value(node.args[1], scope)
            if not isinstance(coll, list):
                raise err(f"'in' needs a list, got {node.args[1]}", "type_error")
            self.env.note("'x in [...]' read as membership")
            t = f"(or false {' '.join(self.eq(item, c) for c in coll)})"
            return Val("Bool", t if k == "in" else f"(not {t})")
        if k == "binder":
            raise err(f"scoped binder {node} outside a [v:scope] list", "bad_scope")
        raise err(f"unsupported expression {node}", "unsupported_construct")

    def scalar(self, node: Node, scope: dict[str, Val]) -> Val:
        v = self.value(node, scope)
        if isinstance(v, list):
            raise err(f"list {node} used as a value", "type_error")
        return v

    # ---- names, operators ---------------------------------------------------------------
    def name(self, name: str, scope: dict[str, Val]) -> Val | list[Val]:
        if name in scope:
            return scope[name]
        if name in self.env.constants:
            return self.env.constants[name]
        if name in self.env.lists:
            return self.env.lists[name]
        if name in self.env.functions:
            raise err(f"function {name!r} used without arguments", "type_error")
        raise err(f"undeclared name {name!r}", "undeclared_name")

    def eq(self, a: Val, b: Val) -> str:
        if a.typ == b.typ:
            return f"(= {a.smt} {b.smt})"
        if {a.typ, b.typ} <= {"Int", "Bool"}:
            return f"(= {to_int(a)} {to_int(b)})"
        raise err(f"comparing {a.smt} ({a.typ}) with {b.smt} ({b.typ})", "type_error")

    def compare(self, node: Node, scope: dict[str, Val]) -> Val:
        vals = [self.scalar(a, scope) for a in node.args]
        if len(vals) > 2:
            self.env.note("chained comparison read as a conjunction")
        parts = []
        for op, a, b in zip(node.ops, vals, vals[1:], strict=False):
            if op in ("==", "!="):
                t = self.eq(a, b)
                parts.append(t if op == "==" else f"(not {t})")
            elif {a.typ, b.typ} <= {"Int", "Bool"}:
                parts.append(f"({_CMP[op]} {to_int(a)} {to_int(b)})")
            else:
                raise err(f"ordering {op!r} on sort {a.typ}/{b.typ} in {node}", "type_error")
        return Val("Bool", parts[0] if len(parts) == 1 else f"(and {' '.join(parts)})")

    def binary(self, node: Node, scope: dict[str, Val]) -> Val:
        op = node.value
        a, b = (self.value(x, scope) for x in node.args)
        if op == "+" and isinstance(a, list) and isinstance(b, list):
            return a + b  # type: ignore[return-value]
        if isinstance(a, list) or isinstance(b, list):
            raise err(f"list operand in {node}", "type_error")
        if op in _LOGIC:
            if a.typ == b.typ == "Bool":
                self.env.note(f"'{op}' on conditions read as {_LOGIC[op]}")
                return Val("Bool", f"({_LOGIC[op]} {a.smt} {b.smt})")
            raise err(f"bitwise {op!r} on non-conditions in {node}", "unsupported_operator")
        if op not in _ARITH:
            raise err(f"unsupported operator {op!r} in {node}", "unsupported_operator")
        return Val("Int", f"({_ARITH[op]} {to_int(a)} {to_int(b)})")

    # ---- calls --------------------------------------------------------------------------
    def call(self, node: Node, scope: dict[str, Val]) -> Val | list[Val]:
        f, args = node.value, node.args
        if f in self.env.functions:
            return self.apply(node, scope)
        handler: Callable[[Node, dict[str, Val]], Val] | None = getattr(self, f"f_{f}", None)
        if handler is None:
            raise err(f"unsupported function {f}()", "unknown_function")
        if f in ("ForAll", "Exists", "Count") and not _scoped(args):
            raise err(f"{f} needs a [v:scope] list first: {node}", "bad_scope")
        return handler(node, scope)

    def apply(self, node: Node, scope: dict[str, Val]) -> Val:
        params, result = self.env.functions[node.value]
        if len(node.args) != len(params):
            raise err(f"{node.value} takes {len(params)} arguments: {node}", "arity")
        parts = []
        for p, a in zip(params, node.args, strict=True):
            v = self.scalar(a, scope)
            if v.typ != p and not (p == "Int" and v.typ == "Bool"):
                raise err(f"argument {a} of {node.value} is {v.typ}, expected {p}", "type_error")
            parts.append(to_int(v) if p == "Int" else v.smt)
        fname = f"f_{node.value}"
        return Val(result, f"({fname} {' '.join(parts)})" if parts else fname)

    def bools(self, args: tuple[Node, ...], scope: dict[str, Val]) -> list[str]:
        if len(args) == 1 and args[0].kind == "list":
            args = args[0].args
        return [self.formula(a, scope) for a in args]

    def f_And(self, node: Node, scope: dict[str, Val]) -> Val:
        items = self.bools(node.args, scope)
        return Val("Bool", f"(and true {' '.join(items)})")

    def f_Or(self, node: Node, scope: dict[str, Val]) -> Val:
        items = self.bools(node.args, scope)
        return Val("Bool", f"(or false {' '.join(items)})")

    def f_Not(self, node: Node, scope: dict[str, Val]) -> Val:
        (a,) = self.bools(node.args, scope) if len(node.args) == 1 else self._arity(node, 1)
        return Val("Bool", f"(not {a})")

    def f_Implies(self, node: Node, scope: dict[str, Val]) -> Val:
        a, b = self.bools(node.args, scope) if len(node.args) == 2 else self._arity(node, 2)
        return Val("Bool", f"(=> {a} {b})")

    def f_Xor(self, node: Node, scope: dict[str, Val]) -> Val:
        a, b = self.bools(node.args, scope) if len(node.args) == 2 else self._arity(node, 2)
        return Val("Bool", f"(xor {a} {b})")

    def f_If(self, node: Node, scope: dict[str, Val]) -> Val:
        if len(node.args) != 3:
            self._arity(node, 3)
        c = self.formula(node.args[0], scope)
        a, b = (self.scalar(x, scope) for x in node.args[1:])
        if a.typ != b.typ:
            return Val("Int", f"(ite {c} {to_int(a)} {to_int(b)})")
        return Val(a.typ, f"(ite {c} {a.smt} {b.smt})")

    def f_Abs(self, node: Node, scope: dict[str, Val]) -> Val:
        if len(node.args) != 1:
            self._arity(node, 1)
        return Val("Int", f"(abs {to_int(self.scalar(node.args[0], scope))})")

    def f_Sum(self, node: Node, scope: dict[str, Val]) -> Val:
        args = (
            node.args[0].args if len(node.args) == 1 and node.args[0].kind == "list" else node.args
        )
        return Val("Int", _sum([to_int(self.scalar(a, scope)) for a in args]))

    def _card(self, node: Node, scope: dict[str, Val], op: str) -> Val:
        if len(node.args) < 2:
            self._arity(node, 2)
        items = self.bools(node.args[:-1], scope)
        k = to_int(self.scalar(node.args[-1], scope))
        return Val("Bool", f"({op} {_sum([f'(ite {i} 1 0)' for i in items])} {k})")

    def f_AtLeast(self, node: Node, scope: dict[str, Val]) -> Val:
        return self._card(node, scope, ">=")

    def f_AtMost(self, node: Node, scope: dict[str, Val]) -> Val:
        return self._card(node, scope, "<=")

    def f_Distinct(self, node: Node, scope: dict[str, Val]) -> Val:
        if _scoped(node.args):
            vals = [self.scalar(node.args[1], s) for s in self.instances(node, scope)]
        else:
            args = (
                node.args[0].args
                if len(node.args) == 1 and node.args[0].kind == "list"
                else node.args
            )
            vals = [self.scalar(a, scope) for a in args]
        if len({v.typ for v in vals}) > 1:
            return Val("Bool", f"(distinct {' '.join(to_int(v) for v in vals)})")
        return Val(
            "Bool", f"(distinct {' '.join(v.smt for v in vals)})" if len(vals) > 1 else "true"
        )

    def f_Count(self, node: Node, scope: dict[str, Val]) -> Val:
        if len(node.args) != 2:
            self._arity(node, 2)
        terms = [to_int(self.scalar(node.args[1], s)) for s in self.instances(node, scope)]
        return Val("Int", _sum(terms))

    def f_ForAll(self, node: Node, scope: dict[str, Val]) -> Val:
        return self.quantifier(node, scope, "and", "forall")

    def f_Exists(self, node: Node, scope: dict[str, Val]) -> Val:
        return self.quantifier(node, scope, "or", "exists")

    def _arity(self, node: Node, n: int) -> list[str]:
        raise err(f"{node.value} takes {n} argument(s): {node}", "arity")

    # ---- scopes -------------------------------------------------------------------------
    def quantifier(self, node: Node, scope: dict[str, Val], join: str, q: str) -> Val:
        if len(node.args) != 2:
            self._arity(node, 2)
        symbolic: list[str] = []
        inner = dict(scope)
        finite = []
        for b in node.args[0].args:
            if b.kind != "binder":
                raise err(f"{node.value} scope item {b} is not v:scope", "bad_scope")
            s = b.args[0]
            if s.kind == "name" and s.value == "int":
                self.fresh += 1
                name = f"q{self.fresh}_{b.value}"
                symbolic.append(f"({name} Int)")
                inner[b.value] = Val("Int", name)
            else:
                finite.append(b)
        sub = Node(node.kind, node.value, (Node("list", args=tuple(finite)), node.args[1]))
        bodies = [self.formula(node.args[1], s) for s in self.instances(sub, inner)]
        body = f"({join} {'true' if join == 'and' else 'false'} {' '.join(bodies)})"
        if symbolic:
            body = f"({q} ({' '.join(symbolic)}) {body})"
        return Val("Bool", body)

    def members(self, scope_node: Node, scope: dict[str, Val]) -> list[Val]:
        if scope_node.kind == "name" and scope_node.value == "bool":
            return [Val("Bool", "false"), Val("Bool", "true")]
        if scope_node.kind == "name" and scope_node.value == "int":
            raise err("cannot enumerate the scope 'int' here", "bad_scope")
        if scope_node.kind == "name" and scope_node.value not in self.env.lists:
            raise err(f"unknown scope {scope_node.value!r}", "undeclared_sort")
        if scope_node.kind == "name" and scope_node.value in self.env.sublists:
            self.env.note(f"scope over sub-list {scope_node.value!r} expanded over its members")
        v = self.value(scope_node, scope)
        if not isinstance(v, list):
            raise err(f"scope {scope_node} is not a list", "bad_scope")
        return v

    def instances(self, node: Node, scope: dict[str, Val]) -> list[dict[str, Val]]:
        binders = node.args[0].args
        if len(node.args) != 2 or any(b.kind != "binder" for b in binders):
            raise err(f"{node.value} needs ([v:scope, ...], expression): {node}", "bad_scope")
        names = [b.value for b in binders]
        pools = [self.members(b.args[0], scope) for b in binders]
        total = 1
        for p in pools:
            total *= max(1, len(p))
        if total > MAX_INSTANCES:
            raise err(f"{node.value} over {total} combinations", "too_large")
        return [{**scope, **dict(zip(names, combo, strict=True))} for combo in product(*pools)]


def _scoped(args: tuple[Node, ...]) -> bool:
    return bool(args) and args[0].kind == "list" and any(a.kind == "binder" for a in args[0].args)


def _sum(terms: list[str]) -> str:
    if not terms:
        return "0"
    return terms[0] if len(terms) == 1 else f"(+ {' '.join(terms)})"
