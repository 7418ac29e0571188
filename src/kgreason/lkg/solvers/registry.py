"""The registry of `Solver`s (the protocol is in `protocol.py`) that the router, codegen,
the executor, `run_program` and `kgreason doctor` read, so that adding an engine is one
module plus one registration.

Registration is explicit: `default_solvers()` builds a fresh `SolverRegistry` holding the
built-in engines and callers `register()` more on their own copy. Nothing registers itself
when a module is imported (no module-level mutable state), so two pipelines in one process
can use different solver sets and tests never leak a toy engine into each other.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from kgreason.lkg.solvers.builtin import HornSolver, Prover9Solver, Z3Solver
from kgreason.lkg.solvers.protocol import ProgramOutcome, RunContext, Solver

__all__ = [
    "ProgramOutcome",
    "RunContext",
    "Solver",
    "SolverRegistry",
    "UnknownSolver",
    "default_solvers",
]


class UnknownSolver(KeyError, ValueError):
    """A route or program format no registered solver handles."""

    def __str__(self) -> str:
        return str(self.args[0])


class SolverRegistry:
    """Solvers by route name, in registration order (the order doctor and prompts use)."""

    def __init__(self, solvers: Sequence[Solver] = ()) -> None:
        self._by_name: dict[str, Solver] = {}
        for s in solvers:
            self.register(s)

    def register(self, solver: Solver) -> Solver:
        """Add a solver; a clash of name, route word or format is an error, not a silent
        override (replace one with `replace`). A solver missing a protocol member (say
        `run_format`, which `run_program` calls) is refused here, not at its first run."""
        if not isinstance(solver, Solver):
            members = (m for m in dir(Solver) if not m.startswith("_"))
            missing = [m for m in members if not hasattr(solver, m)]
            raise TypeError(f"{solver!r} is not a Solver: it lacks {', '.join(missing)}")
        if solver.name in self._by_name:
            raise ValueError(f"solver {solver.name!r} is already registered")
        words, fmts = self.route_words(), self.format_routes()
        for w in solver.route_words:
            if w.upper() in words:
                raise ValueError(f"route word {w!r} already names solver {words[w.upper()]!r}")
        for f in (*solver.formats, *solver.aliases):
            if f in fmts or f in self.aliases():
                raise ValueError(f"program format {f!r} is already handled")
        self._by_name[solver.name] = solver
        return solver

    def replace(self, solver: Solver) -> Solver:
        self._by_name.pop(solver.name, None)
        return self.register(solver)

    def __iter__(self) -> Iterator[Solver]:
        return iter(self._by_name.values())

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self._by_name)

    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def get(self, name: str) -> Solver:
        try:
            return self._by_name[name]
        except KeyError:
            raise UnknownSolver(
                f"unknown route {name!r}; registered solvers: {list(self._by_name)}"
            ) from None

    def route_words(self) -> dict[str, str]:
        """Upper-case router word -> solver name."""
        return {w.upper(): s.name for s in self for w in s.route_words}

    def format_routes(self) -> dict[str, str]:
        """Program format -> the solver name that runs it."""
        return {f: s.name for s in self for f in s.formats}

    def aliases(self) -> dict[str, str]:
        return {a: f for s in self for a, f in s.aliases.items()}

    def for_format(self, fmt: str) -> Solver:
        route = self.format_routes().get(fmt)
        if route is None:
            raise UnknownSolver(f"no registered solver runs program format {fmt!r}")
        return self._by_name[route]


def default_solvers() -> SolverRegistry:
    """A new registry with the built-in engines: Z3, Prover9, the Horn engine (clingo)."""
    return SolverRegistry([Z3Solver(), Prover9Solver(), HornSolver()])
