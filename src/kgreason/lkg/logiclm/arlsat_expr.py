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

from collections import deque
from collections.abc import Callable

from kgreason.lkg.logiclm.arlsat_calls import CallsMixin
from kgreason.lkg.logiclm.arlsat_types import MAX_TERMS, Env, Val, err, scoped, to_int
from kgreason.lkg.logiclm.pyexpr import Node

__all__ = ["Env", "Translator", "Val"]
_CMP = {"==": "=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}
_ARITH = {"+": "+", "-": "-", "*": "*", "/": "div", "//": "div", "%": "mod"}
_LOGIC = {"&": "and", "|": "or", "^": "xor"}


class Translator(CallsMixin):
    def __init__(self, env: Env):
        self.env = env
        self.fresh = 0
        self.size = 0
        #: names Logic-LM's translator leaves behind as module-level z3 constants
        self.globals: dict[str, Val] = {}
        self.global_decls: list[str] = []

    def declare_binders(self, node: Node) -> None:
        """Logic-LM declares each ForAll/Exists variable over a sort (or int/bool) as a
        module-level z3 constant before the statement runs, so a later *free* use of that
        name is that constant. Mirror it: call on each statement, in program order."""
        stack = deque([node])  # breadth first (the order numbers the constants); pop(0)
        while stack:  # on a list was quadratic in a wide expression
            n = stack.popleft()
            if n.kind == "call" and n.value in ("ForAll", "Exists") and scoped(n.args):
                for b in n.args[0].args:
                    if b.kind != "binder" or b.args[0].kind != "name":
                        continue
                    s = b.args[0].value
                    typ = s.capitalize() if s in ("int", "bool") else s
                    if typ in ("Int", "Bool") or s in self.env.sorts:
                        self._bind_global(b.value, typ)
            stack.extend(n.args)

    def _bind_global(self, name: str, typ: str) -> None:
        if name in self.globals and self.globals[name].typ == typ:
            return
        sym = f"k{len(self.global_decls)}_{name}"
        sort = typ if typ in ("Int", "Bool") else f"S_{typ}"
        self.global_decls.append(f"(declare-const {sym} {sort})")
        self.globals[name] = Val(typ, sym)

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
        if self.size > MAX_TERMS:
            raise err(f"expansion exceeds {MAX_TERMS} terms", "too_large")
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
        if name in self.globals:
            self.env.note(
                f"free {name!r} is the constant an earlier ForAll/Exists declared (as Logic-LM)"
            )
            return self.globals[name]
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
        if f in ("ForAll", "Exists", "Count") and not scoped(args):
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
