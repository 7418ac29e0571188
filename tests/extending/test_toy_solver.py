"""The "add a solver" recipe, followed: one module (toy_truthtable.py) plus one
registration line, and the router, codegen, executor, `run_program` and doctor see it."""

from __future__ import annotations

import pytest

from kgreason.lkg.execute import ProgramExecutor
from kgreason.lkg.pipeline import SymbolLKG
from kgreason.lkg.programs import run_program
from kgreason.lkg.router import parse_route
from kgreason.lkg.settings import LKGSettings
from kgreason.lkg.solvers import Solver, SolverRegistry, available, default_solvers
from kgreason.lkg.solvers.registry import UnknownSolver
from kgreason.llm.parse import ParseError
from kgreason.llm.testing import ScriptedLLM
from tests.extending.toy_truthtable import MAX_ATOMS, TruthTableSolver
from tests.lkg.test_pipeline_fixtures import HORN_CONTEXT, HORN_EXTRACTION, fenced, js

ENTAILED = "Premises:\nrain -> wet\nrain\nGoal: wet"
REFUTED = "Premises:\nrain -> wet\n~wet\nGoal: rain"
OPEN = "Premises:\nrain -> wet\nGoal: rain"


@pytest.fixture
def solvers() -> SolverRegistry:
    reg = default_solvers()
    reg.register(TruthTableSolver())  # the recipe's one registration line
    return reg


def test_the_toy_satisfies_the_protocol():
    assert isinstance(TruthTableSolver(), Solver)


# ---- attacks first: the program is model-written text ----------------------------------
@pytest.mark.parametrize(
    "program",
    [
        "Premises:\n__import__('os').system('true')\nGoal: a",
        "Premises:\na\nGoal: " + "(" * 5000 + "a" + ")" * 5000,
        "Premises:\n" + " & ".join(f"x{i}" for i in range(MAX_ATOMS + 1)) + "\nGoal: x0",
        "rain -> wet",
    ],
    ids=["python-text", "deep-nesting", "too-many-atoms", "no-sections"],
)
def test_hostile_or_oversized_programs_are_parse_errors(solvers, program):
    out = run_program(program, "truthtable", solvers=solvers)
    assert out.status == "parse_error" and out.error, out
    assert out.route == "truthtable"


# ---- the registry wires it everywhere --------------------------------------------------
@pytest.mark.parametrize(
    ("program", "verdict"), [(ENTAILED, "True"), (REFUTED, "False"), (OPEN, "Unknown")]
)
def test_run_program_decides_with_the_toy(solvers, program, verdict):
    out = run_program(program, "tt", solvers=solvers, options=["A) True", "B) False", "C) Unknown"])
    assert (out.route, out.solver, out.verdict) == ("truthtable", "truthtable", verdict)
    assert out.answer == {"True": "A", "False": "B", "Unknown": "C"}[verdict]


def test_default_registry_does_not_know_the_toy():
    with pytest.raises(Exception, match="unknown program format"):
        run_program(ENTAILED, "truthtable")
    with pytest.raises(UnknownSolver):
        ProgramExecutor().run("truthtable", ENTAILED, "", None)
    with pytest.raises(ParseError):
        parse_route("TRUTHTABLE")


def test_router_executor_and_doctor_read_the_registry(solvers):
    assert parse_route("I pick TRUTHTABLE.", solvers) == "truthtable"
    assert parse_route("PYKE", solvers) == "horn"
    r = ProgramExecutor(solvers=solvers).run("truthtable", REFUTED, "Is it raining?", None)
    assert r.ok and r.answer == "False"
    found = available(solvers=solvers)
    assert found["truthtable"].startswith("truthtable 1")
    assert {"z3", "prover9", "clingo", "sandbox"} <= found.keys()


def test_clashing_registrations_are_refused(solvers):
    with pytest.raises(ValueError, match="already registered"):
        solvers.register(TruthTableSolver())
    with pytest.raises(ValueError, match="route word"):
        solvers.register(TruthTableSolver(name="other"))


async def test_pipeline_routes_writes_and_repairs_through_the_toy(solvers):
    """The LLM picks the toy (its word appears in the route prompt), codegen uses the
    toy's prompt, the first program is broken and the repair prompt names the toy."""
    seen: dict[str, str] = {}

    def route(messages):
        seen["route"] = messages[0]["content"]
        return "TRUTHTABLE"

    def codegen(messages):
        seen["codegen"] = messages[0]["content"]
        return fenced("Premises:\nrain ->\nGoal: wet")

    def repair(messages):
        seen["repair"] = messages[-1]["content"]
        return fenced(ENTAILED)

    llm = ScriptedLLM(
        {
            "lkg_construct": [js(HORN_EXTRACTION)],
            "*": lambda m: "[]",
            "route": route,
            "codegen": codegen,
            "repair": repair,
        }
    )
    s = LKGSettings(solver_timeout_s=5, solver_memory_mb=512, max_repairs=1)
    r = await SymbolLKG(llm, settings=s, solvers=solvers).asolve(
        HORN_CONTEXT, "Is it wet?", ["A) True", "B) False", "C) Unknown"]
    )
    assert "TRUTHTABLE: truth table" in seen["route"]
    assert "propositional truth-table program" in seen["codegen"]
    assert "truth table (propositional)" in seen["repair"]
    assert r.route.route == "truthtable" and r.route.source == "llm"
    assert [a.status for a in r.attempts] == ["parse_error", "ok"]
    assert r.verdict == "A", r


def test_a_solver_without_run_format_is_refused_at_registration():
    """`run_program` calls `run_format`: a solver written to the older protocol (only
    `run`) is refused when registered, naming what it lacks, not at its first program."""

    class OnlyRun:
        def __getattr__(self, name: str):
            if name == "run_format" or name.startswith("_"):
                raise AttributeError(name)
            return getattr(TruthTableSolver(), name)

    with pytest.raises(TypeError, match="lacks run_format"):
        default_solvers().register(OnlyRun())  # type: ignore[arg-type]


def test_run_program_dispatches_every_format_through_the_registry(solvers):
    """A registry that replaces a built-in solver gets its formats: no format bypasses
    the registry (the old if-chain ran the built-in Z3 code whatever was registered)."""
    from dataclasses import dataclass

    from kgreason.lkg.solvers import ProgramOutcome, RunContext
    from kgreason.lkg.solvers.builtin import Z3Solver

    @dataclass(frozen=True)
    class RecordingZ3(Z3Solver):
        def run_format(self, fmt: str, text: str, ctx: RunContext) -> ProgramOutcome:
            return ProgramOutcome(fmt, self.name, "ok", verdict=f"seen {ctx.dataset}")

    solvers.replace(RecordingZ3())
    out = run_program("(check-sat)", solvers=solvers, dataset="X")  # detected: smtlib
    assert (out.format, out.verdict) == ("smtlib", "seen X")
    assert run_program("Domain:\n1\n[IN]", "csp", solvers=solvers).format == "deduction"


def test_a_detected_format_no_registered_solver_runs_is_a_format_error():
    from kgreason.lkg.solvers import ProgramFormatError
    from kgreason.lkg.solvers.builtin import HornSolver

    with pytest.raises(ProgramFormatError, match="no registered solver runs"):
        run_program("(check-sat)", solvers=SolverRegistry([HornSolver()]))
