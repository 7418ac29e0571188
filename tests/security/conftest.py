"""Fixtures for the attack tests: one sandbox per session, and a canary path that a
successful escape would create (checked by the tests, removed afterwards)."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgreason.lkg.solvers import Sandbox, SolverLimits


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    return Sandbox(SolverLimits(cpu_s=10, memory_mb=1024, wall_s=30))


@pytest.fixture
def canary() -> Iterator[Path]:
    """A path in the shared temp dir (outside any sandbox dir) that must stay absent."""
    path = Path(tempfile.gettempdir()) / f"kgr-canary-{uuid.uuid4().hex}"
    yield path
    if path.exists():
        os.unlink(path)
