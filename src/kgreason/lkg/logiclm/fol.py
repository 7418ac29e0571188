"""FOLIO-style Unicode first-order logic -> AST -> Prover9 syntax.

Used for Logic-LM's FOLIO programs (`Predicates: / Premises: / Conclusion:`, each line
`formula ::: gloss`) and for FOLIO's gold annotations (`premises-FOL`, `conclusion-FOL`).

Grammar, loosest first: ↔ (also ⟷ <->), → (right-assoc; ->), ⊕, ∨ (|), ∧ (&), then
¬ (~ !), quantifiers, atoms. A quantifier's scope extends as far right as possible
(`∀x P(x) → Q(x)` is `∀x (P(x) → Q(x))`), the reading FOLIO's annotators intended.
Terms: constants, bound variables, function applications; `=` and `≠` between terms.
Names not bound by a quantifier are constants, except single letters u-z, which are
free variables (Prover9's convention, implicitly universal) and are reported in `notes`.
Prover9 also treats any free name starting with u-z as a variable, so such constants are
renamed with a `c_` prefix; characters Prover9 rejects (’ ' - .) become `_`.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from kgreason.lkg.logiclm.parsing import DepthGuard, scan
from kgreason.lkg.solvers.base import ProgramFormatError


@dataclass(frozen=True)
class Term:
    name: str
    args: tuple[Term, ...] = ()
    is_var: bool = False


@dataclass(frozen=True)
class Formula:
    """op: "pred" (name,args) | "eq" | "neq" (args=2 terms) | "not" | "and" | "or" | "xor" |
    "imp" | "iff" (subs) | "all" | "exists" (var, subs=(body,))."""

    op: str
    name: str = ""
    args: tuple[Term, ...] = ()
    subs: tuple[Formula, ...] = ()


_TOKEN = re.compile(
    r"\s*(?:(?P<op><->|->|[∀∃¬∧∨→↔⟷⊕≠=(),.&|~!])|(?P<name>[^\W\d](?:[\w’']|-(?=\w)|(?<=\d)\.(?=\d))*|\d[\w.]*)"
    r"|(?P<str>\"[^\"]*\"|“[^”]*”)|(?P<bad>\S))"
)
_ALIASES = {"->": "→", "<->": "↔", "⟷": "↔", "&": "∧", "|": "∨", "~": "¬", "!": "¬"}
_BINARY = {
    "↔": (1, "iff"),
    "→": (2, "imp"),
    "⊕": (3, "xor"),
    "∨": (4, "or"),
    "∧": (5, "and"),
    ",": (5, "and"),  # quirk: "A(x), B(x) → C(x)" written for a conjunction
}
_FREE_VARS = set("uvwxyz")
#: Deepest nesting read (parentheses, ¬, quantifiers, operator chains). Deeper input is a
#: parse error rather than a RecursionError in the parser or in `to_prover9`.
MAX_DEPTH = 200
_OPS = {"(", ")", ",", ".", "∀", "∃", "¬", "∧", "∨", "→", "↔", "⊕", "=", "≠"}


@dataclass
class ParsedFormula:
    formula: Formula
    free_vars: list[str] = field(default_factory=list)
    #: Quirks that were repaired (unbalanced parentheses, ',' as ∧).
    notes: list[str] = field(default_factory=list)


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    text = text.strip()
    for m in scan(_TOKEN, text):
        if m.group("bad"):
            raise ProgramFormatError(
                f"unsupported symbol {m.group('bad')!r} in {text!r}", kind="unsupported_symbol"
            )
        tok = m.group("op") or m.group("name") or m.group("str")
        if tok:
            out.append(_ALIASES.get(tok, tok))
    return out


class _Parser(DepthGuard):
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text.strip().rstrip("."))
        self.i = 0
        #: how many quantifiers in scope bind each name (a list scanned per term was
        #: quadratic for one quantifier binding thousands of names)
        self.bound: Counter[str] = Counter()
        self.free: list[str] = []
        self.notes: list[str] = []
        self.depth = 0
        self.chain = 0

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
        near = " ".join(self.toks[self.i : self.i + 4]) or "end of formula"
        return ProgramFormatError(f"{msg} near {near!r} in {self.text!r}", kind=kind)

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise self.fail(f"expected {want or 'a token'}")
        self.i += 1
        return tok

    def parse(self) -> ParsedFormula:
        if not self.toks:
            raise ProgramFormatError(f"empty formula {self.text!r}", kind="empty")
        f = self.formula(0)
        if self.peek() is not None:
            raise self.fail("unexpected token", kind="trailing_tokens")
        if tree_depth(f) > MAX_DEPTH:  # long operator chains build deep trees iteratively
            raise self.too_deep()
        return ParsedFormula(f, self.free, self.notes)

    def formula(self, min_prec: int) -> Formula:
        """Precedence climbing; → is right-associative, the others left-associative."""
        left = self.unary()
        while (tok := self.peek()) in _BINARY and _BINARY[tok][0] >= min_prec:
            if tok == ",":
                self.notes.append("',' between formulas read as ∧")
            prec, op = _BINARY[self.take()]
            if op == "imp":  # right-associative: each → recurses (`a → a → ...`)
                self.chain += 1
                if self.chain > MAX_DEPTH:  # its tree would be too deep anyway
                    raise self.too_deep()
                right = self.formula(prec)
                self.chain -= 1
            else:
                right = self.formula(prec + 1)
            left = Formula(op, subs=(left, right))
        return left

    def unary(self) -> Formula:
        with self.nested():
            return self._unary()

    def _unary(self) -> Formula:
        tok = self.peek()
        if tok == "¬":
            self.take()
            return Formula("not", subs=(self.unary(),))
        if tok in ("∀", "∃"):
            self.take()
            names = [self.var_name()]
            while self.peek() == ",":
                self.take(",")
                names.append(self.var_name())
            if self.peek() == ".":
                self.take()
            self.bound.update(names)
            body = self.formula(0)  # widest scope
            self.bound.subtract(names)
            for n in reversed(names):
                body = Formula("all" if tok == "∀" else "exists", name=n, subs=(body,))
            return body
        if tok == "(":
            self.take()
            f = self.formula(0)
            self.take(")")
            return f
        return self.atom()

    def var_name(self) -> str:
        tok = self.take()
        if not re.match(r"[^\W\d]\w*$", tok):
            raise self.fail(f"bad quantified variable {tok!r}")
        return tok

    def atom(self) -> Formula:
        left = self.term()
        if self.peek() in ("=", "≠"):
            op = "eq" if self.take() == "=" else "neq"
            return Formula(op, args=(left, self.term()))
        if left.is_var:
            raise self.fail(f"variable {left.name} used as a formula", kind="syntax")
        return Formula("pred", name=left.name, args=left.args)

    def term(self) -> Term:
        with self.nested():
            return self._term()

    def _term(self) -> Term:
        tok = self.take()
        if tok in _OPS:
            self.i -= 1
            raise self.fail("expected a name")
        if self.peek() == "(":
            self.take()
            args = [self.term()]
            while self.peek() == ",":
                self.take()
                args.append(self.term())
            self.take(")")
            return Term(tok, tuple(args))
        if self.bound[tok] > 0:
            return Term(tok, is_var=True)
        if tok in _FREE_VARS:
            if tok not in self.free:
                self.free.append(tok)
            return Term(tok, is_var=True)
        return Term(tok.strip('"“”'))


def tree_depth(f: Formula) -> int:
    """Depth of a formula tree (terms included), without recursion."""
    best = 0
    stack: list[tuple[Formula | Term, int]] = [(f, 1)]
    while stack:
        node, d = stack.pop()
        best = max(best, d)
        if isinstance(node, Formula):
            stack.extend((s, d + 1) for s in node.subs)
        stack.extend((a, d + 1) for a in node.args)
    return best


def parse_fol(text: str) -> ParsedFormula:
    """Parse one formula; raises ProgramFormatError whose `kind` names the failure.

    One repair is tried: when ')' outnumber '(' and the strict parse fails, the surplus
    closing parentheses at the end are dropped (a frequent annotation slip)."""
    try:
        return _Parser(text).parse()
    except ProgramFormatError as e:
        if e.kind == "too_deep":
            raise
        surplus = text.count(")") - text.count("(")
        stripped = text.rstrip().rstrip(".").rstrip()
        if surplus <= 0 or not stripped.endswith(")" * surplus):
            raise
        repaired = _Parser(stripped[: len(stripped) - surplus]).parse()
        repaired.notes.append(f"dropped {surplus} unmatched ')' at the end")
        return repaired


def _sym(name: str, *, const: bool) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    s = re.sub(r"[^A-Za-z0-9_$]", "_", ascii_name).strip("_") or "_"
    if s[0].isdigit() and not const:
        s = "n" + s
    if const and re.match(r"[u-z]", s):
        s = "c_" + s
    return s


def _term(t: Term) -> str:
    if t.is_var:
        return t.name
    if t.args:
        return f"{_sym(t.name, const=False)}({', '.join(_term(a) for a in t.args)})"
    return _sym(t.name, const=True)


def to_prover9(f: Formula) -> str:
    """Prover9 syntax; ⊕ becomes ((A | B) & -(A & B))."""
    op = f.op
    if op == "pred":
        name = _sym(f.name, const=False)
        return f"{name}({', '.join(_term(a) for a in f.args)})" if f.args else name
    if op in ("eq", "neq"):
        return f"({_term(f.args[0])} {'=' if op == 'eq' else '!='} {_term(f.args[1])})"
    if op == "not":
        return f"-({to_prover9(f.subs[0])})"
    if op in ("all", "exists"):
        return f"({op} {f.name} {to_prover9(f.subs[0])})"
    a, b = (to_prover9(s) for s in f.subs)
    if op == "xor":
        return f"(({a} | {b}) & -({a} & {b}))"
    sym = {"and": "&", "or": "|", "imp": "->", "iff": "<->"}[op]
    return f"({a} {sym} {b})"


def fol_to_prover9(text: str) -> str:
    return to_prover9(parse_fol(text).formula)


@dataclass
class FolProblem:
    """Premises and conclusion in Prover9 syntax, with the source formulas kept."""

    premises: list[str]
    conclusion: str
    source_premises: list[str]
    source_conclusion: str
    notes: list[str] = field(default_factory=list)


def translate(premises: list[str], conclusion: str) -> FolProblem:
    """Translate Unicode FOL premises/conclusion; errors name the failing formula."""
    notes: list[str] = []
    out = [_to_prover9(p, f"premise {i + 1}", notes) for i, p in enumerate(premises)]
    goal = _to_prover9(conclusion, "conclusion", notes)
    return FolProblem(out, goal, list(premises), conclusion, notes)


def _to_prover9(text: str, where: str, notes: list[str]) -> str:
    """One formula in Prover9 syntax; its notes (free variables, readings) go to `notes`
    and an error names `where` it came from."""
    try:
        parsed = parse_fol(text)
    except ProgramFormatError as exc:
        raise ProgramFormatError(f"{where}: {exc}", kind=exc.kind) from exc
    if parsed.free_vars:
        notes.append(f"{where}: free variable(s) {parsed.free_vars} read as universal")
    notes += [f"{where}: {n}" for n in parsed.notes]
    return to_prover9(parsed.formula)


def parse_logiclm_fol(program: str) -> FolProblem:
    """Logic-LM's FOLIO program text -> FolProblem. Sections are found by their headers;
    the gloss after ':::' is dropped; only the first Conclusion line is used (as Logic-LM)."""
    if "Premises:" not in program or "Conclusion:" not in program:
        missing = "Premises:" if "Premises:" not in program else "Conclusion:"
        raise ProgramFormatError(f"missing section {missing!r}", kind="missing_section")
    head, concl = program.split("Conclusion:", 1)
    prem_text = head.split("Premises:", 1)[1]
    premises = [ln.split(":::")[0].strip() for ln in prem_text.strip().splitlines()]
    premises = [p for p in premises if p]
    conclusions = [ln.split(":::")[0].strip() for ln in concl.strip().splitlines()]
    conclusions = [c for c in conclusions if c]
    if not conclusions:
        raise ProgramFormatError("empty Conclusion section", kind="missing_section")
    return translate(premises, conclusions[0])
