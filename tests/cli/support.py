"""What the CLI tests share: a clean environment per test, and the one-line error check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def isolate_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, llm_cache: bool = False
) -> None:
    """No OPENAI_*/KGREASON_* from the caller's shell; the static embedder; caches and the
    working directory under tmp_path (the LLM cache off unless `llm_cache`)."""
    for k in list(os.environ):
        if k.startswith(("OPENAI_", "KGREASON_")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    monkeypatch.setenv("KGREASON_CACHE_DIR", str(tmp_path / "cache"))
    if not llm_cache:
        monkeypatch.setenv("KGREASON_LLM__CACHE", "false")
    monkeypatch.chdir(tmp_path)


def one_error_line(r, code: int = 1) -> str:  # type: ignore[no-untyped-def]
    """The command failed with `code` and said so in exactly one `error: ` line."""
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]
