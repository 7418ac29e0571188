"""Shared fixtures: one sandbox per test session so isolation is detected once."""

from __future__ import annotations

import pytest

from kgreason.lkg.solvers import Sandbox, SolverLimits


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    return Sandbox(SolverLimits(cpu_s=10, memory_mb=1024, wall_s=20))
