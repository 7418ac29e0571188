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


@pytest.fixture(scope="session", params=["native", "python"])
def sandbox(request) -> Sandbox:
    """Every attack runs through both launchers: the compiled `_launch.c` and the Python
    fallback `_launch.py` (used where no C compiler is installed)."""
    native = request.param == "native"
    box = Sandbox(SolverLimits(cpu_s=10, memory_mb=1024, wall_s=30), native_launcher=native)
    if native and len(box.isolation().launcher) != 1:
        pytest.skip(f"no native launcher here: {box.isolation().notes}")
    return box


@pytest.fixture
def canary() -> Iterator[Path]:
    """A path in the shared temp dir (outside any sandbox dir) that must stay absent."""
    path = Path(tempfile.gettempdir()) / f"kgr-canary-{uuid.uuid4().hex}"
    yield path
    if path.exists():
        os.unlink(path)
