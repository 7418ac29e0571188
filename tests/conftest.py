"""Shared test configuration: where the test data lives.

Two sources, one layout (`kgqa/...`, `logic/...`, as in this project's `shared/data`):

- `small_data`: slices vendored in `tests/data/` (each folder has PROVENANCE.md and its
  licence), so most tests run in a bare clone;
- `shared_data`: the full datasets, for the checks that need all of them. Set
  `KGREASON_SHARED_DATA` to that directory; unset, `<repo>/../shared/data` is used when it
  exists (a clone beside `shared/`, as in `.ci/run`); otherwise those tests skip with one
  line saying so. Every test that uses the fixture is marked `shared_data`, so
  `pytest -m "not shared_data"` deselects them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.data import SKIP_REASON, SMALL_DATA, shared_data_dir


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared_data)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The full shared datasets, or a skip naming the variable to set."""
    path = shared_data_dir()
    if path is None:
        env = os.environ.get("KGREASON_SHARED_DATA")
        reason = f"{SKIP_REASON}; {env} is not a directory" if env else SKIP_REASON
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def small_data() -> Path:
    """The vendored slices in tests/data (always present)."""
    return SMALL_DATA


@pytest.fixture
def llm_free_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No LLM endpoint or config file from the environment, and the static embedder: the
    CLI runs its LLM-free mode as on a machine with nothing configured."""
    for v in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "KGREASON_LLM__BASE_URL",
        "KGREASON_CONFIG",
    ):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
