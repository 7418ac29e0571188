"""LogicalDeduction programs -> SMT-LIB -> Z3, checked against an independent brute-force
enumeration with Logic-LM's semantics (the option that holds in every solution)."""

from __future__ import annotations

import itertools
import operator
from pathlib import Path

import pytest

from kgreason.lkg.logiclm.dataset import load_file
from kgreason.lkg.logiclm.deduction import parse_deduction, run_deduction, split_sections
from kgreason.lkg.logiclm.pyexpr import Node, parse_expr
from kgreason.lkg.solvers import ProgramFormatError, Sandbox, Z3Runner, available

pytestmark = pytest.mark.skipif(available()["z3"].startswith("missing"), reason="z3 not available")

_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt,
        "<=": operator.le, ">=": operator.ge, "+": operator.add, "-": operator.sub,
        "*": operator.mul}  # fmt: skip


def _eval(node: Node, env: dict[str, int]) -> object:
    """Reference evaluator (plain Python semantics) for the LogicalDeduction subset."""
    k = node.kind
    if k == "num":
        return int(node.value)
    if k == "name":
        return env[node.value]
    if k == "cmp":
        vals = [_eval(a, env) for a in node.args]
        return all(_OPS[o](a, b) for o, a, b in zip(node.ops, vals, vals[1:], strict=False))
    if k == "bin":
        return _OPS[node.value](_eval(node.args[0], env), _eval(node.args[1], env))
    if k == "and":
        return all(_eval(a, env) for a in node.args)
    if k == "or":
        return any(_eval(a, env) for a in node.args)
    if k == "not":
        return not _eval(node.args[0], env)
    if k == "call" and node.value == "AllDifferentConstraint":
        vals = [env[a.value] for a in node.args[0].args]
        return len(set(vals)) == len(vals)
    if k == "call" and node.value == "abs":
        return abs(_eval(node.args[0], env))  # type: ignore[arg-type]
    raise AssertionError(f"reference evaluator: {node}")


def brute_force(text: str) -> str | None:
    """Logic-LM's answer by enumerating every assignment (permutations when all different)."""
    sec = split_sections(text)
    names, domains = [], []
    for _, line in sec["Variables:"]:
        name, dom = line.split("[IN]")
        names.append(name.strip())
        domains.append([int(x) for x in dom.strip(" []").split(",")])
    cons = [parse_expr(line) for _, line in sec["Constraints:"]]
    solutions = []
    for combo in itertools.product(*domains):
        env = dict(zip(names, combo, strict=True))
        if all(_eval(c, env) for c in cons):
            solutions.append(env)
    if not solutions:
        return None
    for _, line in sec["Query:"]:
        letter, expr = line.split(")", 1)
        node = parse_expr(expr)
        if all(_eval(node, s) for s in solutions):
            return letter.strip("( ")
    return None


@pytest.fixture(scope="module")
def runner() -> Z3Runner:
    return Z3Runner(Sandbox())


def _sample(shared: Path, model: str) -> list:
    f = load_file(shared / f"logic/logiclm-programs/LogicalDeduction_dev_{model}.json")
    # three-, five- and seven-object puzzles (7^7 assignments is still fine for product)
    picks = [r for r in f.records if r.program and "[IN] [1, 2, 3]" in r.program][:3]
    picks += [r for r in f.records if r.program and "[IN] [1, 2, 3, 4, 5]\n" in r.program][:3]
    return picks


@pytest.mark.parametrize("model", ["gpt-3.5-turbo", "text-davinci-003"])
def test_real_programs_match_brute_force(small_data: Path, runner: Z3Runner, model: str):
    records = _sample(small_data, model)
    assert len(records) == 6
    for rec in records:
        out = run_deduction(rec.program, runner=runner)
        assert out.result.ok, out.result.error
        assert out.letter == brute_force(rec.program), rec.id


def test_first_book_record_answers_gold(small_data: Path, runner: Z3Runner):
    f = load_file(small_data / "logic/logiclm-programs/LogicalDeduction_dev_gpt-3.5-turbo.json")
    rec = f.records[0]
    out = run_deduction(rec.program, runner=runner)
    assert out.letter == rec.answer == brute_force(rec.program)
    assert out.per_option[rec.answer] and sum(out.per_option.values()) == 1


PUZZLE = """Domain:
1: first
3: last
Variables:
a [IN] [1, 2, 3]
b [IN] [1, 2, 3]
c [IN] [1, 2, 3]
Constraints:
AllDifferentConstraint([a, b, c]) ::: distinct
{extra}
Query:
A) a == 1
B) b == 3 - 1 ::: arithmetic in the option (Logic-LM's regex would read b == 3)
C) c == 3
"""


def test_answer_semantics(runner: Z3Runner):
    out = run_deduction(PUZZLE.format(extra="a < b\nb < c"), runner=runner)
    assert out.letter == "A" and out.per_option == {"A": True, "B": True, "C": True}
    assert "first taken" in out.notes[0]
    out = run_deduction(PUZZLE.format(extra="c == 1\nb < a or a == 9"), runner=runner)
    assert out.letter == "B" == brute_force(PUZZLE.format(extra="c == 1\nb < a or a == 9"))
    under = run_deduction(PUZZLE.format(extra="a != 2"), runner=runner)
    assert under.letter is None and under.error_kind == "no_option" and under.executed
    none = run_deduction(PUZZLE.format(extra="a < b\nb < c\nc < a"), runner=runner)
    assert none.letter is None and none.error_kind == "no_solution" and not none.executed


@pytest.mark.parametrize(
    ("extra", "kind", "line", "named"),
    [
        ("a == cheapest", "undeclared_name", 10, "cheapest"),
        ("ExactSumConstraint([a, b])", "unsupported_construct", 10, "ExactSumConstraint"),
        ("a < b && b < c", "unsupported_operator", 10, "&&"),
        ("a + (b == 1) > 1", "type_error", 10, "condition"),
        ("a = 2", "unsupported_operator", 10, "assignment"),
    ],
)
def test_malformed_constraints_name_the_problem(extra, kind, line, named):
    with pytest.raises(ProgramFormatError) as ei:
        parse_deduction(PUZZLE.format(extra=extra))
    assert ei.value.kind == kind and ei.value.line == line
    assert named in str(ei.value)


def test_malformed_sections_and_domains(runner: Z3Runner):
    bad_domain = PUZZLE.format(extra="").replace("c [IN] [1, 2, 3]", "c [IN] [low, high]")
    with pytest.raises(ProgramFormatError) as ei:
        parse_deduction(bad_domain)
    assert ei.value.kind == "non_integer_domain" and ei.value.line == 7
    with pytest.raises(ProgramFormatError) as ei:
        parse_deduction(PUZZLE.format(extra="").replace("Domain:", "Dom:"))
    assert ei.value.kind == "missing_section" and "Domain:" in str(ei.value)
    out = run_deduction(PUZZLE.format(extra="").replace("A) a == 1", "A) a === 1"))
    assert not out.executed and out.result.status == "parse_error" and "option A" in out.error
