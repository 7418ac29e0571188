"""A parser for the Python-expression subset that Logic-LM's constraint programs are written
in (LogicalDeduction constraints, AR-LSAT's Z3 DSL). Logic-LM `exec`s these expressions;
kgreason parses them into a small AST instead, so nothing in the program text ever runs.

Precedence follows Python (loosest first): `or`, `and`, `not`, comparisons (chained, plus
`in` / `not in`), `|`, `^`, `&`, `+ -`, `* / // %`, unary `- + ~`, `**`, then calls and
primaries. Lists may hold scoped binders (`[p:people, m:meals]`, the DSL's quantifier
scopes). Tokens that are not Python (`&&`, `||`, `!`, `->` outside declarations) and
Python features outside the subset (comprehensions, lambdas, strings, ...) raise
`ProgramFormatError` with a `kind` naming the construct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgreason.lkg.logiclm.parsing import DepthGuard, scan
from kgreason.lkg.solvers.base import ProgramFormatError

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?![\w:]))|(?P<name>[A-Za-z_]\w*)"
    r"|(?P<op>\*\*|//|==|!=|<=|>=|&&|\|\||->|[-+*/%<>()\[\],:&|^~!=])|(?P<bad>\S+?))"
)
_CMP = {"==", "!=", "<", ">", "<=", ">="}
_KEYWORDS = {"and", "or", "not", "in", "is", "if", "else", "for", "lambda", "None"}
_BAD_OPS = {
    "&&": "'&&' (write And(...))",
    "||": "'||' (write Or(...))",
    "!": "'!' (write Not(...))",
    "->": "'->' outside a Function declaration",
    "=": "assignment '='",
}
_BINARY = (("|",), ("^",), ("&",), ("+", "-"), ("*", "/", "//", "%"))
#: Deepest nesting read (brackets, unary operators, operator chains): each level costs the
#: recursive-descent parser a dozen frames, and the translators recurse over the tree.
MAX_DEPTH = 40


@dataclass(frozen=True)
class Node:
    """kind: num (value) | name (value) | bool (value "True"/"False") | call (value = name,
    args) | list (args) | binder (value = variable, args = (scope name node,)) | not (args) |
    and / or (args) | cmp (ops, args: chained comparison) | bin (value = op, args) |
    unary (value = op, args) | in / notin (args = (item, container))."""

    kind: str
    value: str = ""
    args: tuple[Node, ...] = ()
    ops: tuple[str, ...] = ()

    def __str__(self) -> str:  # compact source-like rendering for error messages
        if self.kind in ("num", "name", "bool"):
            return self.value
        if self.kind == "call":
            return f"{self.value}({', '.join(map(str, self.args))})"
        if self.kind == "list":
            return f"[{', '.join(map(str, self.args))}]"
        if self.kind == "binder":
            return f"{self.value}:{self.args[0]}"
        if self.kind == "cmp":
            out = str(self.args[0])
            for op, a in zip(self.ops, self.args[1:], strict=True):
                out += f" {op} {a}"
            return out
        if self.kind in ("bin", "and", "or"):
            sep = f" {self.value or self.kind} "
            return "(" + sep.join(map(str, self.args)) + ")"
        if self.kind in ("not", "unary"):
            return f"{self.value or 'not '}{self.args[0]}"
        return f"{self.args[0]} {'in' if self.kind == 'in' else 'not in'} {self.args[1]}"


def tokenize(text: str) -> list[str]:
    out: list[str] = []
    for m in scan(_TOKEN, text):
        if m.group("bad"):
            bad = m.group("bad")
            kind = "string" if bad[0] in "'\"" else "syntax"
            raise ProgramFormatError(f"unexpected {bad!r} in {text.strip()!r}", kind=kind)
        out.append(m.group("num") or m.group("name") or m.group("op"))
    return out


class _Parser(DepthGuard):
    def __init__(self, text: str):
        self.text = text.strip()
        self.toks = tokenize(self.text)
        self.i = 0
        self.depth = 0

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.too_deep()

    def too_deep(self) -> ProgramFormatError:
        return ProgramFormatError(
            f"parse_error: nesting deeper than {MAX_DEPTH} in {self.text[:80]!r}...",
            kind="too_deep",
        )

    def fail(self, msg: str, kind: str = "syntax") -> ProgramFormatError:
        return ProgramFormatError(f"{msg} in {self.text!r}", kind=kind)

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None:
            raise self.fail(f"unexpected end (expected {want or 'more'})")
        if want is not None and tok != want:
            if tok in _BAD_OPS:
                raise self.fail(f"unsupported {_BAD_OPS[tok]}", "unsupported_operator")
            raise self.fail(f"expected {want!r}, got {tok!r}")
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.expr()
        if tree_depth(node) > MAX_DEPTH * 4:  # long chains build deep trees iteratively
            raise self.too_deep()
        if self.peek() is not None:
            tok = self.peek()
            if tok in _BAD_OPS:
                raise self.fail(f"unsupported {_BAD_OPS[tok]}", "unsupported_operator")
            if tok in ("for", "if", "else", "lambda", "is"):
                raise self.fail(f"unsupported Python construct {tok!r}", "unsupported_construct")
            raise self.fail(f"unexpected {tok!r}")
        return node

    def expr(self) -> Node:
        return self.boolop("or")

    def boolop(self, op: str) -> Node:
        sub = (lambda: self.boolop("and")) if op == "or" else self.negation
        items = [sub()]
        while self.peek() == op:
            self.take()
            items.append(sub())
        return items[0] if len(items) == 1 else Node(op, args=tuple(items))

    def negation(self) -> Node:
        if self.peek() == "not":
            self.take()
            with self.nested():
                return Node("not", args=(self.negation(),))
        return self.comparison()

    def comparison(self) -> Node:
        first = self.binary(0)
        ops: list[str] = []
        items = [first]
        while True:
            tok = self.peek()
            if tok in _CMP:
                ops.append(self.take())
            elif tok == "in" or (tok == "not" and self.peek(1) == "in"):
                if ops:
                    raise self.fail("'in' chained with a comparison", "unsupported_construct")
                neg = self.take() == "not"
                if neg:
                    self.take("in")
                return Node("notin" if neg else "in", args=(first, self.binary(0)))
            else:
                break
            items.append(self.binary(0))
        return first if not ops else Node("cmp", args=tuple(items), ops=tuple(ops))

    def binary(self, level: int) -> Node:
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in _BINARY[level]:
            op = self.take()
            left = Node("bin", op, (left, self.binary(level + 1)))
        return left

    def unary(self) -> Node:
        if self.peek() in ("-", "+", "~"):
            op = self.take()
            with self.nested():
                return Node("unary", op, (self.unary(),))
        if self.peek() in ("!",):
            raise self.fail(f"unsupported {_BAD_OPS['!']}", "unsupported_operator")
        base = self.primary()
        if self.peek() == "**":
            self.take()
            return Node("bin", "**", (base, self.unary()))
        return base

    def primary(self) -> Node:
        with self.nested():
            return self._primary()

    def _primary(self) -> Node:
        tok = self.take("an expression" if self.peek() is None else None)
        if tok == "(":
            inner = self.expr()
            if self.peek() == ",":
                raise self.fail("tuples are not supported", "unsupported_construct")
            self.take(")")
            return inner
        if tok == "[":
            return Node("list", args=tuple(self.items("]", binders=True)))
        if tok.isdigit():
            return Node("num", tok)
        if re.match(r"[A-Za-z_]", tok):
            if tok in ("True", "False"):
                return Node("bool", tok)
            if tok in _KEYWORDS:
                raise self.fail(f"unsupported Python construct {tok!r}", "unsupported_construct")
            if self.peek() == "(":
                self.take()
                return Node("call", tok, tuple(self.items(")")))
            if self.peek() == "[":
                raise self.fail(f"subscript {tok}[...] is not supported", "unsupported_construct")
            return Node("name", tok)
        if tok in _BAD_OPS:
            raise self.fail(f"unsupported {_BAD_OPS[tok]}", "unsupported_operator")
        raise self.fail(f"unexpected {tok!r}")

    def items(self, close: str, *, binders: bool = False) -> list[Node]:
        out: list[Node] = []
        while self.peek() != close:
            if binders and self.peek(1) == ":" and re.match(r"[A-Za-z_]\w*$", self.peek() or ""):
                var = self.take()
                self.take(":")
                out.append(Node("binder", var, (self.binary(0),)))
            else:
                out.append(self.expr())
            if self.peek() == "for":
                raise self.fail("comprehensions are not supported", "unsupported_construct")
            if self.peek() != close:
                self.take(",")
        self.take(close)
        return out


def tree_depth(node: Node) -> int:
    """Depth of an expression tree, without recursion."""
    best = 0
    stack = [(node, 1)]
    while stack:
        n, d = stack.pop()
        best = max(best, d)
        stack.extend((a, d + 1) for a in n.args)
    return best


def parse_expr(text: str) -> Node:
    """Parse one expression; raises ProgramFormatError (kind: syntax, unsupported_operator,
    unsupported_construct, string, too_deep)."""
    if not text.strip():
        raise ProgramFormatError("empty expression", kind="syntax")
    try:
        return _Parser(text).parse()
    except RecursionError:  # a backstop: MAX_DEPTH should stop it first
        raise ProgramFormatError(
            "parse_error: expression nested too deeply", kind="too_deep"
        ) from None
