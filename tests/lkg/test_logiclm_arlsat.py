"""AR-LSAT DSL programs (Logic-LM / SatLM) -> SMT-LIB -> Z3, checked against brute-force
references written out by hand for real records, and Logic-LM's option-check semantics."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from kgreason.lkg.logiclm.arlsat import parse_arlsat, run_arlsat
from kgreason.lkg.logiclm.dataset import load_file
from kgreason.lkg.solvers import ProgramFormatError, Sandbox, Z3Runner, available

pytestmark = pytest.mark.skipif(available()["z3"].startswith("missing"), reason="z3 not available")
PROGRAMS = "logic/logiclm-programs/AR-LSAT_dev_{}.json"


@pytest.fixture(scope="module")
def runner() -> Z3Runner:
    return Z3Runner(Sandbox())


def _record(shared: Path, model: str, rid: str):
    recs = {r.id: r for r in load_file(shared / PROGRAMS.format(model)).records}
    return recs[rid]


def test_recital_record_cannot_be_true(small_data: Path, runner: Z3Runner):
    """ar_lsat_201112_2-G_1_3 (gpt-3.5-turbo): five recital slots, is_exception(is_sat(..))."""
    rec = _record(small_data, "gpt-3.5-turbo", "ar_lsat_201112_2-G_1_3")
    out = run_arlsat(rec.program, runner=runner)
    # reference: the program's constraints over every order of 5 distinct slots
    # (its range line sits in # Declarations, which Logic-LM ignores; 1..5 suffices here)
    possible = {k: False for k in "ABCDE"}
    for p in itertools.permutations(range(1, 6)):
        f, g, h, j, k = p
        if g < f and k < h and k < j and h in (f - 1, f + 1):
            for letter, ok in zip("ABCDE", (f == j - 1, g == h - 1, h == g - 1, j == g - 1,
                                            k == h - 1), strict=True):  # fmt: skip
                possible[letter] |= ok
    assert out.per_option == {k: not v for k, v in possible.items()}
    assert out.letter == rec.answer == "C"
    assert any("ignored (as Logic-LM)" in n for n in out.notes)


def test_cd_sale_record_against_all_interpretations(small_data: Path, runner: Z3Runner):
    """ar_lsat_200006_1-G_2_12 (text-davinci-003): on_sale(type, condition) -> bool."""
    rec = _record(small_data, "text-davinci-003", "ar_lsat_200006_1-G_2_12")
    out = run_arlsat(rec.program, runner=runner)
    types, conds = ["jazz", "opera", "pop", "rap", "soul"], ["new", "used"]
    possible = dict.fromkeys("ABCDE", False)
    for bits in itertools.product([False, True], repeat=10):
        s = {(t, c): bits[i * 2 + j] for i, t in enumerate(types) for j, c in enumerate(conds)}
        ok = (
            s["pop", "used"]
            and not s["opera", "new"]
            and (not (s["pop", "new"] and s["pop", "used"]) or all(s[t, "new"] for t in types))
            and (not (s["jazz", "new"] and s["jazz", "used"]) or not s["rap", "new"])
            and ((s["jazz", "new"] and s["jazz", "used"]) or s["pop", "new"])
            and (not (s["rap", "new"] or s["rap", "used"]) or not s["soul", "new"])
        )
        if ok:
            for letter, v in zip("ABCDE", (not s["jazz", "used"], not s["opera", "used"],
                                           not s["rap", "used"], s["soul", "used"],
                                           not s["soul", "used"]), strict=True):  # fmt: skip
                possible[letter] |= v
    assert out.per_option == {k: not v for k, v in possible.items()}
    assert out.letter == next(k for k, v in out.per_option.items() if v)
    assert out.letter == rec.answer


TOY = """# Declarations
people = EnumSort([Ann, Bob, Cal])
men = EnumSort([Bob, Cal])
slots = EnumSort([1, 2, 3])
slot = Function([people] -> [slots])
likes = Function([people, people] -> [bool])
score = Function([people] -> [int])
# Constraints
Distinct([p:people], slot(p)) ::: one person per slot
slot(Ann) < slot(Bob) ::: Ann before Bob
Count([p:people], likes(Ann, p)) == 1 ::: Ann likes exactly one person
ForAll([m:men], Not(likes(Ann, m))) ::: Ann likes no man
ForAll([p:people], score(p) == slot(p) * 10)
{extra}
# Options
Question ::: toy
{options}
"""


def _toy(runner: Z3Runner, options: str, extra: str = ""):
    return run_arlsat(TOY.format(options=options, extra=extra), runner=runner)


def test_option_checks_follow_logic_lm(runner: Z3Runner):
    opts = "\n".join([
        "is_valid(likes(Ann, Ann)) ::: (A) forced",
        "is_sat(slot(Cal) == 1) ::: (B) possible",
        "is_unsat(slot(Bob) == 1) ::: (C) impossible",
        "is_exception(is_valid(slot(Ann) == 1)) ::: (D) not forced",
        "is_accurate_list([slot(Ann) == 1, slot(Ann) == 2]) ::: (E) exactly the possible slots",
    ])  # fmt: skip
    out = _toy(runner, opts)
    assert out.result.ok and out.letter == "A"
    assert out.per_option == dict.fromkeys("ABCDE", True)
    wrong = "\n".join([
        "is_valid(slot(Cal) == 3)", "is_sat(score(Bob) == 10)", "is_unsat(slot(Cal) == 2)",
        "not is_sat(slot(Ann) == 2) or is_valid(slot(Ann) == 1)",
        "is_accurate_list([slot(Ann) == 1])",
    ])  # fmt: skip
    out = _toy(runner, wrong)
    assert out.per_option == dict.fromkeys("ABCDE", False)
    assert out.letter is None and out.error_kind == "no_output" and not out.executed


def test_scopes_sublists_and_int_quantifiers(runner: Z3Runner):
    out = _toy(
        runner,
        "is_valid(Exists([m:men], slot(m) == 3)) ::: (A)\n"
        "is_valid(ForAll([n:int], Implies(n > score(Ann), n >= 21))) ::: (B)",
        extra="ForAll([a:people, b:people], Implies(likes(a, b), slot(a) <= slot(b)))",
    )
    assert out.letter == "A" and out.per_option == {"A": True, "B": False}
    assert any("sub-list 'men'" in n for n in out.notes)
    # slots range (digits EnumSort) is enforced on `slot`: no fourth slot
    out = _toy(runner, "is_sat(slot(Cal) == 4) ::: (A)\nis_sat(slot(Cal) == 2) ::: (B)")
    assert out.letter == "B" and out.per_option == {"A": False, "B": True}


@pytest.mark.parametrize(
    ("options", "extra", "kind", "named"),
    [
        ("is_min(score(Ann)) ::: (A)", "", "unknown_function", "is_min"),
        ("is_sat(slot(Ann) == 1 && slot(Bob) == 2)", "", "unsupported_operator", "&&"),
        ("is_sat(slot(Ann) == Bob)", "", "type_error", "Bob"),
        ("is_sat(True)", "ForAll([d:days], likes(Ann, Ann))", "undeclared_sort", "days"),
        ("is_sat(True)", "AtLeastOne([likes(Ann, Bob)])", "unknown_function", "AtLeastOne"),
        ("is_sat(True)", "slot(Ann, Bob) == 1", "arity", "slot"),
        ("Count([p:people], likes(p, p))", "", "bad_option", "is_valid"),
        ("is_sat(likes(Ann, Dan))", "", "undeclared_name", "Dan"),
    ],
)
def test_malformed_programs_name_the_construct(options, extra, kind, named):
    text = TOY.format(options=options, extra=extra)
    with pytest.raises(ProgramFormatError) as ei:
        parse_arlsat(text)
    assert ei.value.kind == kind and named in str(ei.value)
    bad_line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln and ln in (options, extra))
    assert ei.value.line == bad_line


def test_bad_declarations_and_sections(runner: Z3Runner):
    union = TOY.format(options="is_sat(True)", extra="").replace(
        "likes = Function([people, people] -> [bool])",
        "likes = Function([people + men, people] -> [bool])",
    )
    with pytest.raises(ProgramFormatError) as ei:
        parse_arlsat(union)
    assert ei.value.kind == "bad_declaration" and ei.value.line == 6
    out = run_arlsat(TOY.replace("# Options", "# Choices"), runner=runner)
    assert out.error_kind == "missing_section" and "# Options" in out.error
    assert out.result.status == "parse_error"


def test_free_quantifier_variable_is_logic_lm_global_constant(runner: Z3Runner):
    """Logic-LM declares `p` (ForAll([p:people], ...)) as a module-level z3 constant: a later
    free `p` is that constant (existential under is_sat, universal under is_valid)."""
    opts = "is_valid(slot(p) == 3) ::: (A)\nis_sat(slot(p) == 3) ::: (B)"
    out = _toy(runner, opts, extra="ForAll([p:people], slot(p) >= 1)")
    assert out.per_option == {"A": False, "B": True} and out.letter == "B"
    assert any("free 'p'" in n for n in out.notes)
    with pytest.raises(ProgramFormatError) as ei:  # no earlier quantifier declared `q`
        parse_arlsat(TOY.format(options="is_sat(slot(q) == 3)", extra=""))
    assert ei.value.kind == "undeclared_name" and "'q'" in str(ei.value)


def test_hostile_programs_are_bounded():
    deep = "(" * 3000 + "slot(Ann) == 1" + ")" * 3000
    with pytest.raises(ProgramFormatError) as ei:
        parse_arlsat(TOY.format(options="is_sat(True)", extra=deep))
    assert ei.value.kind == "too_deep" and ei.value.line == 14
    wide = "ForAll([a:people, b:people, c:people, d:people, e:people, f:people, g:people, " \
        "h:people, i:people, j:people], likes(a, j))"  # fmt: skip
    with pytest.raises(ProgramFormatError) as ei:
        parse_arlsat(TOY.format(options="is_sat(True)", extra=wide))
    assert ei.value.kind == "too_large" and "59049 combinations" in str(ei.value)
