"""Horn programs as data, their translation to ASP (clingo) and proof-tree reconstruction.

The rule program is never handed to clingo as the LLM wrote it: it is parsed into these
dataclasses first and the ASP text is generated from them, with every predicate name and
constant quoted as an ASP string. So nothing in the program can become a clingo
directive (`#script (python)` would execute code, `#include` would read files).

Encoding: `h("P",("a","b"))` for P(a,b), `n("P",(...))` for ¬P(a,b) (strong negation kept
as a separate predicate so contradictions stay visible), and `f(I,(X,...))` for "rule I
fired with these variable bindings", from which the derivation is rebuilt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgreason.lkg.solvers.base import ProgramFormatError

#: Bounds of a shown derivation (Logic-LM's proofs: at most 17 lines, 10 deep).
MAX_PROOF_DEPTH = 100
MAX_PROOF_LINES = 1000
MAX_PROOF_CHARS = 100_000


@dataclass(frozen=True)
class Atom:
    """P(args) or, with `negated`, ¬P(args). Arguments starting with "$" are variables.
    In rule bodies, `naf` marks negation as failure ("not derivable")."""

    pred: str
    args: tuple[str, ...] = ()
    negated: bool = False
    naf: bool = False

    def variables(self) -> list[str]:
        return [a for a in self.args if a.startswith("$")]

    def complement(self) -> Atom:
        return Atom(self.pred, self.args, not self.negated)

    def ground(self, binding: dict[str, str]) -> Atom:
        return Atom(self.pred, tuple(binding.get(a, a) for a in self.args), self.negated)

    def __str__(self) -> str:
        s = f"{'¬' if self.negated else ''}{self.pred}({', '.join(self.args)})"
        return f"not {s}" if self.naf else s


@dataclass(frozen=True)
class Rule:
    body: tuple[Atom, ...]
    head: tuple[Atom, ...]
    name: str = ""
    #: The source text (or gloss) the rule came from, for proofs.
    text: str = ""

    def __str__(self) -> str:
        return " ∧ ".join(map(str, self.body)) + " → " + " ∧ ".join(map(str, self.head))


@dataclass
class HornProgram:
    facts: list[Atom]
    rules: list[Rule]
    query: Atom
    #: Closed world: a query that is not derived is False (else Unknown).
    closed_world: bool = False
    notes: list[str] = field(default_factory=list)


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _args(atom: Atom, var: dict[str, str]) -> str:
    parts = [var[a] if a.startswith("$") else _q(a) for a in atom.args]
    if len(parts) == 1:
        return f"({parts[0]},)"
    return "(" + ",".join(parts) + ")"


def _lit(atom: Atom, var: dict[str, str]) -> str:
    s = f"{'n' if atom.negated else 'h'}({_q(atom.pred)},{_args(atom, var)})"
    return f"not {s}" if atom.naf else s


def rule_vars(rule: Rule) -> list[str]:
    """Variables bound by the positive body, in first-occurrence order."""
    return list(dict.fromkeys(v for a in rule.body if not a.naf for v in a.variables()))


def to_asp(program: HornProgram) -> str:
    """ASP text for clingo. Raises ProgramFormatError for unsafe rules (a head or negated
    variable that the positive body does not bind) and non-ground facts."""
    lines: list[str] = []
    for fact in program.facts:
        if fact.variables():
            raise ProgramFormatError(f"fact {fact} has variables", kind="nonground_fact")
        lines.append(_lit(fact, {}) + ".")
    for i, rule in enumerate(program.rules):
        bound = rule_vars(rule)
        var = {v: f"V{k}" for k, v in enumerate(bound)}
        for a in (*rule.head, *(b for b in rule.body if b.naf)):
            loose = [v for v in a.variables() if v not in var]
            if loose:
                raise ProgramFormatError(
                    f"rule {i + 1} ({rule}): variable {loose[0]} in {a} is not bound by the body",
                    kind="unsafe_rule",
                )
        fired = f"f({i},{_tuple(var.values())})"
        body = ", ".join(_lit(b, var) for b in rule.body)
        lines.append(f"{fired} :- {body}." if body else f"{fired}.")
        for h in rule.head:
            lines.append(f"{_lit(h, var)} :- {fired}.")
    lines += ["#show h/2.", "#show n/2.", "#show f/2."]
    return "\n".join(lines) + "\n"


def _tuple(items: object) -> str:
    xs = list(items)  # type: ignore[call-overload]
    return f"({xs[0]},)" if len(xs) == 1 else "(" + ",".join(xs) + ")"


def decode(
    atoms: list[list[Any]], program: HornProgram
) -> tuple[set[Atom], list[tuple[int, dict[str, str]]]]:
    """Worker JSON (`[name, [arg, ...]]` per shown atom) -> derived literals and fired rules."""
    derived: set[Atom] = set()
    fired: list[tuple[int, dict[str, str]]] = []
    names: dict[int, list[str]] = {}  # per rule, not per firing
    for name, args in atoms:  # type: ignore[misc]
        if name in ("h", "n"):
            pred, tup = args  # type: ignore[misc]
            derived.add(Atom(str(pred), tuple(str(x) for x in tup), name == "n"))
        elif name == "f":
            idx, tup = args  # type: ignore[misc]
            i = int(idx)
            if i not in names:
                names[i] = rule_vars(program.rules[i])
            fired.append((i, dict(zip(names[i], (str(x) for x in tup), strict=True))))
    return derived, fired


def derivation(
    goal: Atom, program: HornProgram, derived: set[Atom], fired: list[tuple[int, dict[str, str]]]
) -> list[str]:
    """A well-founded proof of `goal` as indented lines, shortest-depth first.

    Levels are computed like a forward-chaining fixpoint, so the chosen justification of an
    atom never depends on the atom itself.
    """
    facts = {f for f in program.facts}
    level: dict[Atom, int] = {a: 0 for a in facts if a in derived}
    support: dict[Atom, tuple[int, dict[str, str]]] = {}
    pending = list(fired)
    changed = True
    while changed:
        changed = False
        for idx, binding in pending:
            rule = program.rules[idx]
            body = [b.ground(binding) for b in rule.body if not b.naf]
            if all(b in level for b in body):
                lv = 1 + max((level[b] for b in body), default=0)
                for h in rule.head:
                    g = h.ground(binding)
                    if g not in level or lv < level[g]:
                        level[g], support[g] = lv, (idx, binding)
                        changed = True
    return _show(goal, program, facts, support) if goal in derived else []


def _show(
    goal: Atom,
    program: HornProgram,
    facts: set[Atom],
    support: dict[Atom, tuple[int, dict[str, str]]],
) -> list[str]:
    """The proof tree of `goal`, depth first, as indented lines: iterative, and cut at
    MAX_PROOF_DEPTH / MAX_PROOF_LINES / MAX_PROOF_CHARS. A shared sub-derivation is shown
    again under each use, so k "diamonds" (two rules from A_i, both needed for A_i+1)
    spell out 2^k trees: recursion ended in RecursionError on long chains and the
    expansion held the GIL for seconds on a 2 KB program."""
    out: list[str] = []
    size = 0
    #: ("show", atom, depth, atoms on the path) or ("line", text)
    work: list[tuple[Any, ...]] = [("show", goal, 0, frozenset())]
    while work:
        if len(out) >= MAX_PROOF_LINES or size >= MAX_PROOF_CHARS:
            out.append(f"… (proof cut at {len(out)} lines)")
            break
        item = work.pop()
        if item[0] == "line":
            line = item[1]
        else:
            _, atom, depth, seen = item
            pad = "  " * depth
            if atom in facts:
                line = f"{pad}{atom}  [fact]"
            elif atom not in support or atom in seen:
                line = f"{pad}{atom}  [?]"
            elif depth >= MAX_PROOF_DEPTH:
                line = f"{pad}{atom}  [… derivation deeper than {MAX_PROOF_DEPTH} steps]"
            else:
                idx, binding = support[atom]
                rule = program.rules[idx]
                line = f"{pad}{atom}  [{rule.name or f'rule {idx + 1}'}: {rule}]"
                below = seen | {atom}
                for b in reversed(rule.body):
                    g = b.ground(binding)
                    if b.naf:
                        plain = Atom(g.pred, g.args, g.negated)
                        work.append(("line", f"{pad}  not {plain}  [not derivable]"))
                    else:
                        work.append(("show", g, depth + 1, below))
        out.append(line)
        size += len(line)
    return out
