"""Built-in functions and scoped forms of the AR-LSAT DSL (And, Or, Implies, If, Count,
Distinct, ForAll, Exists, ...), mixed into `arlsat_expr.Translator`."""

from __future__ import annotations

from itertools import product
from typing import TYPE_CHECKING

from kgreason.lkg.logiclm.arlsat_types import MAX_INSTANCES, Env, Val, err, scoped, to_int
from kgreason.lkg.logiclm.pyexpr import Node


def _sum(terms: list[str]) -> str:
    if not terms:
        return "0"
    return terms[0] if len(terms) == 1 else f"(+ {' '.join(terms)})"


class CallsMixin:
    """Needs the host's `formula`, `scalar`, `value`, `env` and `fresh`."""

    if TYPE_CHECKING:
        env: Env
        fresh: int

        def formula(self, node: Node, scope: dict[str, Val] | None = None) -> str: ...
        def scalar(self, node: Node, scope: dict[str, Val]) -> Val: ...
        def value(self, node: Node, scope: dict[str, Val]) -> Val | list[Val]: ...

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
        if scoped(node.args):
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
