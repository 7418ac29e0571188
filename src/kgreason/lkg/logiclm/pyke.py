"""Logic-LM's ProntoQA / ProofWriter rule programs -> kgreason's Horn engine (clingo).

Format (Logic-LM, written for Pyke):

    Predicates:
    Big($x, bool) ::: Is x big?
    Facts:
    Big(Bob, True) ::: Bob is big.
    Rules:
    Big($x, True) && Kind($x, False) >>> Red($x, True) ::: ...
    Query:
    Red(Bob, False) ::: Bob is not red.

Encoding, reproducing Logic-LM's Pyke executor: the last argument True/False is the truth
value, so `P(a, False)` is the strong negation ¬P(a); relations without a value are
positive (`Eats(cat, mouse)`). Statements are sorted by `>>>` rather than by section
(the LLM often puts rules under Facts:, and Logic-LM's own validator moves them too);
facts with variables are skipped as Logic-LM does. Answers: ProntoQA A=True / B=False
(a query that is not derived is False: ProntoQA's theories are complete); ProofWriter
A=True / B=False / C=Unknown (open world). When both P and ¬P are derived, Logic-LM's
`results[0] and results[1]` makes the value False; we do the same and note it.

Beyond Pyke (it would reject these, we read them and record a note): negation written as
a prefix (`!P(x, True)`, `¬P(...)`, `not P(...)`) or as `Not(P(x), True)` flips the value;
`P(x, True)` with a value in a relation position is accepted as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgreason.lkg.solvers.base import ProgramFormatError, SolverResult
from kgreason.lkg.solvers.horn import HornRunner
from kgreason.lkg.solvers.horn_asp import Atom, HornProgram, Rule

_SECTIONS = ("Predicates:", "Facts:", "Rules:", "Query:")
_ATOM = re.compile(r"^(?P<pred>[^\W\d][\w\-]*)\s*\((?P<args>.*)\)$")
_NEG_PREFIX = re.compile(r"^(?:!|¬|~|not\s+|NOT\s+)\s*")
_NOT_WRAP = re.compile(r"^Not\s*\(\s*(?P<inner>.+\))\s*(?:,\s*(?P<val>True|False)\s*)?\)$")
#: Deepest `Not(Not(...))` read (Logic-LM's programs: one or two).
MAX_NOT_DEPTH = 50
ANSWERS = {"ProntoQA": ("A", "B", "B"), "ProofWriter": ("A", "B", "C")}


@dataclass
class PykeOutcome:
    """`letter` is the dataset's option letter, None when the program did not run."""

    letter: str | None
    result: SolverResult
    program: HornProgram | None = None
    notes: list[str] = field(default_factory=list)


def _split_sections(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {s: [] for s in _SECTIONS}
    current: str | None = None
    for raw in text.splitlines():
        line = raw.split(":::")[0].strip()
        header = next((s for s in _SECTIONS if line.startswith(s)), None)
        if header:
            current = header
            line = line[len(header) :].strip()
        if line and current and not line.startswith("#"):
            found[current].append(line)
    return found


def parse_atom(text: str, notes: list[str], *, where: str) -> Atom:
    """`Pred(a, b, True)` -> Atom; raises ProgramFormatError naming `where`.

    `Not(...)` wrappers are peeled in a loop, at most MAX_NOT_DEPTH of them: read
    recursively, each level re-matched the rest of the text (quadratic) and a thousand
    levels raised RecursionError."""
    flips = False  # the value flips of the prefixes and wrappers peeled so far
    wraps = 0
    while True:
        s = text.strip().rstrip(".").strip()
        if m := _NEG_PREFIX.match(s):
            s, flips = s[m.end() :], not flips
            notes.append(f"{where}: prefix negation read as a False value")
        m = _NOT_WRAP.match(s)
        if not m:
            break
        wraps += 1
        if wraps > MAX_NOT_DEPTH:
            raise ProgramFormatError(
                f"{where}: Not(...) nested deeper than {MAX_NOT_DEPTH}", kind="too_deep"
            )
        flips ^= m.group("val") != "False"  # Not(P) and Not(P, True) negate; Not(P, False) not
        text = m.group("inner")
    atom = _plain_atom(s, text, where=where)
    notes.extend([f"{where}: Not(...) read as a False value"] * wraps)
    return Atom(atom.pred, atom.args, atom.negated ^ flips)


def _plain_atom(s: str, text: str, *, where: str) -> Atom:
    m = _ATOM.match(s)
    if not m:
        raise ProgramFormatError(f"{where}: cannot read atom {text.strip()!r}", kind="bad_atom")
    args = [a.strip() for a in m.group("args").split(",")] if m.group("args").strip() else []
    if any(not a or "(" in a or ")" in a for a in args):
        raise ProgramFormatError(f"{where}: bad arguments in {text.strip()!r}", kind="bad_atom")
    negated = False
    if args and args[-1] in ("True", "False"):
        negated = args.pop() == "False"
    elif args and args[-1].lower() in ("true", "false", "unknown", "bool"):
        raise ProgramFormatError(
            f"{where}: unsupported truth value {args[-1]!r} in {text.strip()!r}",
            kind="unsupported_value",
        )
    return Atom(m.group("pred"), tuple(args), negated)


def parse_rule(text: str, notes: list[str], *, where: str) -> Rule:
    if text.count(">>>") != 1:
        raise ProgramFormatError(f"{where}: a rule needs exactly one '>>>'", kind="bad_rule")
    body_text, head_text = text.split(">>>")
    body = tuple(parse_atom(b, notes, where=where) for b in body_text.split("&&") if b.strip())
    head = tuple(parse_atom(h, notes, where=where) for h in head_text.split("&&") if h.strip())
    if not body or not head:
        raise ProgramFormatError(f"{where}: empty rule side in {text!r}", kind="bad_rule")
    return Rule(body, head, name=where, text=text.strip())


def parse_pyke_program(
    text: str, *, closed_world: bool = False, strict: bool = False
) -> HornProgram:
    """Logic-LM rule program text -> HornProgram (raises ProgramFormatError).

    `strict` rejects the negation spellings Pyke itself would not accept (`!P`, `¬P`,
    `not P`, `Not(P)`), for comparisons with Logic-LM's own executor."""
    sec = _split_sections(text)
    if not any(sec[s] for s in ("Facts:", "Rules:")):
        raise ProgramFormatError("no Facts: or Rules: statements", kind="missing_section")
    if not sec["Query:"]:
        raise ProgramFormatError("missing or empty Query: section", kind="missing_section")
    notes: list[str] = []
    facts: list[Atom] = []
    rules: list[Rule] = []
    statements = [("fact", s) for s in sec["Facts:"]] + [("rule", s) for s in sec["Rules:"]]
    for n, (section, stmt) in enumerate(statements, 1):
        if ">>>" in stmt:
            if section == "fact":
                notes.append(f"statement {n}: rule found under Facts:")
            rules.append(parse_rule(stmt, notes, where=f"rule {len(rules) + 1}"))
            continue
        atom = parse_atom(stmt, notes, where=f"fact {len(facts) + 1}")
        if atom.variables():
            notes.append(f"fact {stmt!r} has variables: skipped (as Logic-LM)")
            continue
        facts.append(atom)
    query = parse_atom(sec["Query:"][0], notes, where="query")
    nonstandard = [n for n in notes if "read as a False value" in n]
    if strict and nonstandard:
        raise ProgramFormatError(
            f"{nonstandard[0].split(':')[0]}: negation outside the value argument is not Pyke "
            "syntax; write P(x, False)",
            kind="nonstandard_negation",
        )
    if query.variables():
        raise ProgramFormatError(f"query {sec['Query:'][0]!r} has variables", kind="bad_query")
    return HornProgram(facts, rules, query, closed_world=closed_world, notes=notes)


def run_logiclm_rules(
    text: str, dataset: str, *, runner: HornRunner | None = None, strict: bool = False
) -> PykeOutcome:
    """Parse and run a Logic-LM ProntoQA/ProofWriter program; map the verdict to a letter."""
    if dataset not in ANSWERS:
        raise ValueError(f"dataset must be one of {sorted(ANSWERS)}, got {dataset!r}")
    try:
        program = parse_pyke_program(text, closed_world=dataset == "ProntoQA", strict=strict)
    except ProgramFormatError as exc:
        res = SolverResult("clingo", "parse_error", error_kind="parse_error", error=str(exc))
        res.details["kind"] = exc.kind
        return PykeOutcome(None, res)
    res = (runner or HornRunner()).run(program)
    if not res.ok:
        res.details.setdefault("kind", res.error_kind)
        return PykeOutcome(None, res, program, program.notes)
    yes, no, unknown = ANSWERS[dataset]
    notes = list(program.notes)
    if res.verdict == "inconsistent":
        notes.append("both the query and its negation derived: False wins (as Logic-LM)")
        letter = yes if program.query.negated else no
    else:
        letter = {"proved": yes, "disproved": no, "unknown": unknown}[res.verdict or "unknown"]
    return PykeOutcome(letter, res, program, notes)
