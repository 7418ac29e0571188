"""Solver layer: Z3 (SMT-LIB 2), Prover9 (first-order logic) and a Horn-rule engine (clingo),
each run in a sandboxed subprocess with CPU, memory and wall-clock limits."""

from kgreason.lkg.solvers.base import (
    ProgramFormatError,
    SolverError,
    SolverFailed,
    SolverLimits,
    SolverResult,
    SolverUnavailable,
)
from kgreason.lkg.solvers.sandbox import Sandbox
from kgreason.lkg.solvers.z3 import Z3Runner, check_options, run_z3

__all__ = [
    "ProgramFormatError",
    "Sandbox",
    "SolverError",
    "SolverFailed",
    "SolverLimits",
    "SolverResult",
    "SolverUnavailable",
    "Z3Runner",
    "check_options",
    "run_z3",
]
