"""Horn-rule engine on clingo: verdicts, derivation trees, negation, raw ASP refusals, limits."""

from __future__ import annotations

import dataclasses

from kgreason.lkg.solvers import (
    Atom,
    HornProgram,
    HornRunner,
    Rule,
    SolverLimits,
    run_asp,
    run_horn,
)


def _program(query: Atom, *, closed_world: bool = False) -> HornProgram:
    x = "$x"
    return HornProgram(
        facts=[
            Atom("Quiet", ("Bob",)),
            Atom("Cold", ("Bob",)),
            Atom("Big", ("Bob",), negated=True),
        ],
        rules=[
            Rule((Atom("Quiet", (x,)), Atom("Cold", (x,))), (Atom("Smart", (x,)),)),
            Rule((Atom("Smart", (x,)),), (Atom("Red", (x,)), Atom("Kind", (x,), negated=True))),
            Rule((Atom("Red", (x,)), Atom("Round", (x,), naf=True)), (Atom("Nice", (x,)),)),
        ],
        query=query,
        closed_world=closed_world,
    )


def test_proved_with_derivation_tree(sandbox):
    res = run_horn(_program(Atom("Nice", ("Bob",))), sandbox=sandbox)
    assert res.ok and res.verdict == "proved" and res.answer == "True"
    lines = (res.proof or "").splitlines()
    assert lines[0].startswith("Nice(Bob)  [rule 3")
    assert any("Smart(Bob)  [rule 1" in ln for ln in lines)
    assert any(ln.strip() == "Quiet(Bob)  [fact]" for ln in lines)
    assert any("not Round(Bob)  [not derivable]" in ln for ln in lines)
    assert [name for name, _ in res.details["fired"]] == ["rule 1", "rule 2", "rule 3"]


def test_negated_head_disproves(sandbox):
    res = run_horn(_program(Atom("Kind", ("Bob",))), sandbox=sandbox)
    assert res.verdict == "disproved" and res.answer == "False"
    assert (res.proof or "").startswith("¬Kind(Bob)  [rule 2")


def test_open_and_closed_world(sandbox):
    open_res = run_horn(_program(Atom("Happy", ("Bob",))), sandbox=sandbox)
    assert open_res.answer == "Unknown"
    closed = run_horn(_program(Atom("Happy", ("Bob",)), closed_world=True), sandbox=sandbox)
    assert closed.answer == "False" and "closed world" in (closed.proof or "")


def test_inconsistent_program_is_flagged(sandbox):
    prog = _program(Atom("Big", ("Bob",)))
    prog = dataclasses.replace(
        prog, rules=[*prog.rules, Rule((Atom("Smart", ("$x",)),), (Atom("Big", ("$x",)),))]
    )
    res = run_horn(prog, sandbox=sandbox)
    assert res.verdict == "inconsistent" and res.answer is None


def test_unsafe_rule_is_a_parse_error():
    prog = _program(Atom("Nice", ("Bob",)))
    bad = Rule((Atom("Quiet", ("$x",)),), (Atom("Likes", ("$x", "$y")),))
    res = run_horn(dataclasses.replace(prog, rules=[bad]))
    assert res.status == "parse_error" and "$y" in (res.error or "")
    assert res.details["kind"] == "unsafe_rule"


def test_quotes_in_names_cannot_inject_directives(sandbox):
    evil = 'x").\n#script (python)\nimport os\n#end.\n%'
    prog = HornProgram([Atom("P", (evil,))], [], Atom("P", (evil,)))
    res = run_horn(prog, sandbox=sandbox)
    assert res.ok and res.answer == "True"


def test_raw_asp_directives_refused_and_errors_reported(sandbox):
    res = run_asp("#script (python)\nimport os\n#end.\n", sandbox=sandbox)
    assert res.error_kind == "refused" and "#script" in (res.error or "")
    res = run_asp("a :- b(", sandbox=sandbox)
    assert res.status == "parse_error" and "syntax error" in (res.error or "")
    res = run_asp("a :- not b. b :- not a. c(1..3).", sandbox=sandbox)
    assert res.verdict == "sat" and "c(3)" in (res.model or {})["atoms"]


def test_infinite_grounding_is_stopped(sandbox):
    res = HornRunner(sandbox, SolverLimits(cpu_s=2, memory_mb=256, wall_s=10)).run_asp(
        "n(0). n(X+1) :- n(X)."
    )
    assert res.status in ("memory", "timeout")
    assert res.error in (
        "memory limit 256 MB exceeded (MemoryError while grounding)",
        "cpu time limit 2s exceeded",
    )
