"""Solver layer: Z3 (SMT-LIB 2), Prover9 (first-order logic) and a Horn-rule engine (clingo),
each run in a sandboxed subprocess with CPU, memory and wall-clock limits, behind the
`Solver` protocol; `default_solvers()` builds the registry the pipeline reads."""

from kgreason.lkg.solvers.availability import available
from kgreason.lkg.solvers.base import (
    ProgramFormatError,
    SolverError,
    SolverFailed,
    SolverLimits,
    SolverResult,
    SolverUnavailable,
)
from kgreason.lkg.solvers.horn import HornRunner, run_asp, run_horn
from kgreason.lkg.solvers.horn_asp import Atom, HornProgram, Rule
from kgreason.lkg.solvers.outcome import outcome_of_run
from kgreason.lkg.solvers.protocol import ProgramOutcome, RunContext, Solver
from kgreason.lkg.solvers.prover9 import Prover9Runner, run_prover9
from kgreason.lkg.solvers.registry import SolverRegistry, UnknownSolver, default_solvers
from kgreason.lkg.solvers.sandbox import Sandbox
from kgreason.lkg.solvers.z3 import Z3Runner, check_options, run_z3

__all__ = [
    "Atom",
    "HornProgram",
    "HornRunner",
    "ProgramFormatError",
    "ProgramOutcome",
    "Prover9Runner",
    "Rule",
    "RunContext",
    "Sandbox",
    "Solver",
    "SolverError",
    "SolverFailed",
    "SolverLimits",
    "SolverRegistry",
    "SolverResult",
    "SolverUnavailable",
    "UnknownSolver",
    "Z3Runner",
    "available",
    "check_options",
    "default_solvers",
    "outcome_of_run",
    "run_asp",
    "run_horn",
    "run_prover9",
    "run_z3",
]
