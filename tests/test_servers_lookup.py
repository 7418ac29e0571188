"""Servers installed in the virtualenv are found without activating it (issue 10)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from tests import servers


def test_binary_beside_interpreter_wins_over_path(tmp_path: Path, monkeypatch):
    venv_bin, on_path = tmp_path / "venv-bin", tmp_path / "path-bin"
    venv_bin.mkdir()
    on_path.mkdir()
    for d in (venv_bin, on_path):
        f = d / "fake-server"
        f.write_text("#!/bin/sh\n")
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))
    monkeypatch.setenv("PATH", str(on_path))
    assert servers.find_binary("fake-server") == str(venv_bin / "fake-server")
    (venv_bin / "fake-server").unlink()
    assert servers.find_binary("fake-server") == str(on_path / "fake-server")
    monkeypatch.setenv("PATH", os.devnull)
    (on_path / "fake-server").unlink()
    assert servers.find_binary("fake-server") is None


def test_non_executable_file_beside_interpreter_is_ignored(tmp_path: Path, monkeypatch):
    (tmp_path / "fake-server").write_text("not a program")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", os.devnull)
    assert servers.find_binary("fake-server") is None
