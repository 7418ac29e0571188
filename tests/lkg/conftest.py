"""Fixtures shared by the lkg CLI tests (test_cli_lkg.py, test_cli_solve.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def cli_no_llm_env(monkeypatch, tmp_path: Path) -> None:
    """No LLM endpoint or config file from the environment; run in the test's tmp_path, so
    the CLI falls back to its LLM-free path and writes nothing outside the test."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KGREASON_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
