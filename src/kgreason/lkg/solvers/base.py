"""Types shared by every solver runner (Z3, Prover9, Horn rules).

Engine failures (bad syntax, limits, crashes) are *results*, not exceptions: the
self-repair loop feeds them back to the LLM, so they must carry the engine's own
message. Exceptions are kept for misuse of the API and for a missing engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: "unavailable": the engine or the sandbox could not run at all (an infrastructure
#: failure, never the program's fault).
Status = Literal["ok", "parse_error", "solver_error", "timeout", "memory", "crash", "unavailable"]

#: Values of `SolverResult.error_kind`.
ErrorKind = Literal[
    "parse_error",  # the engine (or our front-end parser) rejected the program text
    "refused",  # the program asks for something the sandbox forbids (file include, output file)
    "solver_error",  # the engine ran but reported an error (e.g. unknown symbol at run time)
    "cpu_limit",
    "wall_clock",
    "memory_limit",
    "output_limit",  # the program printed more than the sandbox keeps
    "crash",  # killed by a signal or exited with an unexpected code and no known message
    "unavailable",  # the engine or the sandbox cannot run here (infrastructure)
    "internal_error",  # kgreason itself raised while handling the program
]

TAIL_CHARS = 4000


def tail(text: str, n: int = TAIL_CHARS) -> str:
    """Keep the end of a long engine output: errors and verdicts are printed last."""
    return text if len(text) <= n else "…" + text[-n:]


@dataclass(frozen=True)
class SolverLimits:
    """Per-run resource limits enforced by the sandbox (RLIMIT_CPU, RLIMIT_AS, a timer)."""

    cpu_s: float = 10.0
    memory_mb: int = 1024
    wall_s: float = 20.0

    def __post_init__(self) -> None:
        if self.cpu_s <= 0 or self.wall_s <= 0 or self.memory_mb <= 0:
            raise ValueError(f"solver limits must be positive, got {self}")


@dataclass
class SolverResult:
    """Outcome of one solver run.

    `verdict` depends on the solver: Z3 gives "sat" / "unsat" / "unknown"; Prover9 and the
    Horn engine give "proved" / "disproved" / "unknown" for a goal, and their True/False/
    Unknown wrappers put "True" / "False" / "Unknown" in `answer`. `verdict` is None unless
    `status == "ok"`.
    """

    solver: str
    status: Status
    verdict: str | None = None
    #: Logic-level answer when the call asked a question: "True"/"False"/"Unknown" or letters.
    answer: str | None = None
    proof: str | None = None
    model: dict[str, str] | None = None
    #: (get-value ...) results for Z3, keyed by the term text.
    values: dict[str, str] | None = None
    stdout: str = ""
    stderr: str = ""
    error_kind: ErrorKind | None = None
    error: str | None = None
    time_s: float = 0.0
    #: The program text that was handed to the engine (after any translation).
    program: str = ""
    #: Engine-specific extras (unsat core, sub-results of a multi-run question, ...).
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def describe(self) -> str:
        """One line for logs and for the repair prompt."""
        if self.ok:
            return f"{self.solver}: {self.answer or self.verdict}"
        return f"{self.solver}: {self.status} ({self.error_kind}): {self.error}"

    def raise_for_status(self) -> SolverResult:
        if not self.ok:
            raise SolverFailed(self)
        return self


class SolverError(Exception):
    """Base of every exception raised by the solver layer."""


class SolverUnavailable(SolverError):
    """The engine binary or module cannot be found or executed; the message says why."""


class SolverFailed(SolverError):
    """Raised by `SolverResult.raise_for_status` for callers that prefer exceptions."""

    def __init__(self, result: SolverResult) -> None:
        super().__init__(result.describe())
        self.result = result


class ProgramFormatError(SolverError, ValueError):
    """A front-end (Logic-LM format, FOL text) could not be read; names the line/section."""

    def __init__(self, message: str, *, kind: str = "parse_error", line: int | None = None):
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{where}{message}")
        self.kind = kind
        self.line = line
