"""The built-in engines behind the `Solver` protocol: adapters over the runners.

The runners keep their own methods (`Z3Runner.check_options`, `Prover9Runner.decide`,
`HornRunner.run_asp`, ...) for the Logic-LM front-ends; these adapters give the pipeline
one `run(program, ctx)` that applies the codegen conventions of `kgreason.lkg.execute`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING

from kgreason.lkg.solvers import horn, prover9, z3
from kgreason.lkg.solvers.base import SolverResult
from kgreason.lkg.solvers.preflight import EngineCheck
from kgreason.lkg.solvers.registry import RunContext
from kgreason.lkg.solvers.sandbox import Sandbox

if TYPE_CHECKING:
    from kgreason.lkg.execute import ProgramExecutor


def _packaged_prompt(name: str) -> str:
    return resources.files("kgreason.lkg.prompts").joinpath(f"{name}.txt").read_text("utf-8")


def _executor(ctx: RunContext) -> ProgramExecutor:
    """Lazy import: kgreason.lkg.execute imports the registry."""
    from kgreason.lkg.execute import ProgramExecutor

    return ProgramExecutor(ctx.limits, ctx.sandbox or Sandbox(ctx.limits))


@dataclass(frozen=True)
class Z3Solver:
    name: str = "z3"
    label: str = "Z3 (SMT-LIB 2)"
    engine: str = "z3"
    route_words: tuple[str, ...] = ("Z3",)
    formats: tuple[str, ...] = ("smtlib", "deduction", "arlsat")
    aliases: Mapping[str, str] = field(
        default_factory=lambda: {
            "smt2": "smtlib",
            "smt": "smtlib",
            "z3": "smtlib",
            "csp": "deduction",
            "lsat": "arlsat",
        }
    )

    def codegen_prompt(self) -> str:
        return _packaged_prompt("codegen_z3")

    def preflight(self, sandbox: Sandbox) -> EngineCheck:
        return z3.preflight(sandbox)

    def version(self, sandbox: Sandbox) -> str:
        return z3.z3_version(sandbox)

    def run(self, program: str, ctx: RunContext) -> SolverResult:
        return _executor(ctx).run_z3(program, ctx.question, ctx.options)


@dataclass(frozen=True)
class Prover9Solver:
    name: str = "prover9"
    label: str = "Prover9"
    engine: str = "prover9"
    route_words: tuple[str, ...] = ("PROVER9",)
    formats: tuple[str, ...] = ("prover9", "fol")
    aliases: Mapping[str, str] = field(default_factory=lambda: {"ladr": "prover9", "folio": "fol"})

    def codegen_prompt(self) -> str:
        return _packaged_prompt("codegen_prover9")

    def preflight(self, sandbox: Sandbox) -> EngineCheck:
        return prover9.preflight(sandbox)

    def version(self, sandbox: Sandbox) -> str:
        return prover9.prover9_version(sandbox)

    def run(self, program: str, ctx: RunContext) -> SolverResult:
        return _executor(ctx).run_prover9(program)


@dataclass(frozen=True)
class HornSolver:
    name: str = "horn"
    label: str = "Horn-rule (clingo)"
    engine: str = "clingo"
    route_words: tuple[str, ...] = ("PYKE", "HORN")
    formats: tuple[str, ...] = ("pyke", "asp")
    aliases: Mapping[str, str] = field(
        default_factory=lambda: {"horn": "pyke", "rules": "pyke", "clingo": "asp"}
    )

    def codegen_prompt(self) -> str:
        return _packaged_prompt("codegen_horn")

    def preflight(self, sandbox: Sandbox) -> EngineCheck:
        return horn.preflight(sandbox)

    def version(self, sandbox: Sandbox) -> str:
        return horn.clingo_version()

    def run(self, program: str, ctx: RunContext) -> SolverResult:
        """Closed world for a two-valued (true/false) question, open world otherwise."""
        from kgreason.lkg.router import options_kind

        two_valued = options_kind(ctx.options) == "tf" or (
            not ctx.options and not re.search(r"unknown|uncertain", ctx.question, re.I)
        )
        return _executor(ctx).run_horn(program, closed_world=two_valued)
