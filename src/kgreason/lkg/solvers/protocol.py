"""What a solver is to the rest of kgreason: the `Solver` protocol, the `RunContext` a run
gets and the `ProgramOutcome` a run of a named program format gives back.

Kept apart from the registry (which builds the built-in set) so that the built-in
adapters and a user's solver import only this, and nothing here imports an adapter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kgreason.lkg.solvers.base import SolverLimits, SolverResult

if TYPE_CHECKING:
    from kgreason.lkg.solvers.preflight import EngineCheck
    from kgreason.lkg.solvers.sandbox import Sandbox


@dataclass(frozen=True)
class RunContext:
    """What one run may use besides the program: limits, the shared sandbox, the question
    and options an answer is read against, and (for a Logic-LM program) its dataset,
    whose answer letters and world assumption differ."""

    limits: SolverLimits = field(default_factory=SolverLimits)
    sandbox: Sandbox | None = None
    question: str = ""
    options: Sequence[str] | None = None
    dataset: str | None = None


@dataclass
class ProgramOutcome:
    """What a run of a program format found. `answer` is an option letter when one is
    determinable; `verdict` is True/False/Unknown, sat/unsat/unknown, or the letter for
    option programs; `route` is the solver that ran it, `solver` the engine."""

    format: str
    route: str
    status: str
    verdict: str | None = None
    answer: str | None = None
    solver: str = ""
    results: list[SolverResult] = field(default_factory=list)
    proof: str | None = None
    model: dict[str, str] | None = None
    error_kind: str | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    time_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@runtime_checkable
class Solver(Protocol):
    """One reasoning engine as the SymbolLKG pipeline sees it.

    name      the route name the router picks and results record ("z3")
    label     how prompts name it ("Z3 (SMT-LIB 2)")
    engine    the key `kgreason doctor` reports its availability under ("clingo")
    route_words  upper-case words an LLM router reply may use for it ("PYKE", "HORN")
    formats   program formats (`kgreason solve --format`) it runs; aliases map to them
    """

    # read-only members: a frozen dataclass's fields (or properties) satisfy them
    @property
    def name(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def route_words(self) -> tuple[str, ...]: ...
    @property
    def formats(self) -> tuple[str, ...]: ...
    @property
    def aliases(self) -> Mapping[str, str]: ...

    def codegen_prompt(self) -> str:
        """The codegen template ($question, $options, $logfile, $context)."""
        ...

    def preflight(self, sandbox: Sandbox) -> EngineCheck:
        """Can the engine run here (as the sandbox user)? Never raises for a missing one."""
        ...

    def version(self, sandbox: Sandbox) -> str: ...

    def run(self, program: str, ctx: RunContext) -> SolverResult:
        """Decide a program its codegen prompt asked for (the pipeline's route); failures
        are results (status, error_kind), not exceptions."""
        ...

    def run_format(self, fmt: str, text: str, ctx: RunContext) -> ProgramOutcome:
        """Decide an existing program in one of `formats` (`run_program`, `kgreason solve
        --program`), translating it as the format needs. A solver whose formats are its
        codegen programs returns `outcome_of_run(self, fmt, text, ctx)`."""
        ...
