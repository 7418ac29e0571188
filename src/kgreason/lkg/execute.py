"""Run an LLM-written program on the route's registered solver and read off the answer.

The executor only dispatches: the route names a solver in the `SolverRegistry`, whose
`run` applies its codegen convention (`kgreason.lkg.solvers.conventions` for the
built-in three). It holds the one sandbox (network isolation detected once) and the
limits every run of a pipeline shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kgreason.lkg.solvers.base import SolverLimits, SolverResult
from kgreason.lkg.solvers.registry import RunContext, SolverRegistry, default_solvers
from kgreason.lkg.solvers.sandbox import Sandbox


@dataclass
class ProgramExecutor:
    """Runs route programs on the registered solvers, in one shared sandbox."""

    limits: SolverLimits = field(default_factory=SolverLimits)
    sandbox: Sandbox | None = None
    solvers: SolverRegistry = field(default_factory=default_solvers)

    def __post_init__(self) -> None:
        if self.sandbox is None:
            self.sandbox = Sandbox(self.limits)

    def context(self, question: str = "", options: Sequence[str] | None = None) -> RunContext:
        """The context a run on this executor's sandbox and limits gets."""
        return RunContext(self.limits, self.sandbox, question, options)

    def run(
        self, route: str, program: str, question: str, options: Sequence[str] | None
    ) -> SolverResult:
        """The route's solver decides the program (an unknown route is a ValueError)."""
        return self.solvers.get(route).run(program, self.context(question, options))
