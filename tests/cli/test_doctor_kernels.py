"""`kgreason doctor`'s kernels section never compiles: it reads numba's disk cache index
(kgreason.heap.kernel_cache) and reports a cold cache as "not compiled", not an error."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.cli.doctor import check_kernels

numba = pytest.importorskip("numba")


def _loops() -> int:
    import importlib

    from kgreason.heap import kernel_modules

    return sum(len(importlib.import_module(m).LOOPS) for m in kernel_modules())


@pytest.fixture
def no_compile(monkeypatch):
    """Every way to compile raises: numba's decorators and dispatcher, kgreason.jit's
    seams and the warm-up entry points."""
    from numba.core import dispatcher

    from kgreason import heap, jit

    def boom(*a, **k):
        raise AssertionError("doctor compiled a kernel")

    monkeypatch.delenv("KGREASON_JIT", raising=False)
    monkeypatch.setattr(numba, "njit", boom)
    monkeypatch.setattr(numba, "jit", boom)
    monkeypatch.setattr(dispatcher.Dispatcher, "compile", boom)
    monkeypatch.setattr(jit, "_njit", boom)
    monkeypatch.setattr(jit, "warm", boom)
    monkeypatch.setattr(jit, "announce_compile", boom)
    monkeypatch.setattr(heap, "warm_all", boom)
    monkeypatch.setattr(heap, "warm_kernels", boom)


@pytest.fixture
def cold_cache(monkeypatch, tmp_path):
    """A fresh install's numba cache: an empty NUMBA_CACHE_DIR (numba reads it at import,
    so its config is set; the checkout's own __pycache__ caches are then not looked at)."""
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba-cache"))


def test_cold_cache_is_reported_without_compiling(no_compile, cold_cache):
    rep = check_kernels()
    n = _loops()
    assert rep["status"] == "not compiled", rep
    assert (rep["cached"], rep["kernels"]) == (0, n) and len(rep["not_cached"]) == n
    assert rep["numba"] == numba.__version__
    assert "not compiled yet" in rep["detail"] and "kgreason kg build" in rep["detail"]


def test_doctor_command_on_a_cold_cache_exits_0(no_compile, cold_cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["doctor", "--json", "-s", "kernels"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["ok"] is True and rep["kernels"]["status"] == "not compiled"
    assert "compiling graph kernels" not in r.stderr  # doctor does not pay the compile
    r = CliRunner().invoke(app, ["doctor", "-s", "kernels"])
    assert r.exit_code == 0 and "kernels  not compiled" in r.stdout, r.output


def test_checkout_cache_is_read_without_compiling(no_compile):
    """Whatever state this checkout's cache is in, the check reads it without compiling
    and counts every kernel."""
    rep = check_kernels()
    assert rep["status"] in {"ok", "not compiled"}, rep
    assert rep["kernels"] == _loops() and 0 <= rep["cached"] <= rep["kernels"]


@pytest.mark.parametrize(
    ("states", "status", "words"),
    [
        ({"a.x#0": True, "b.y#0": True}, "ok", "2/2 kernels cached"),
        ({"a.x#0": True, "b.y#0": False}, "not compiled", "1/2 kernels cached; 1 not compiled"),
        ({"a.x#0": False, "b.y#0": False}, "not compiled", "kernels not compiled yet (0/2"),
        ({"a.x#0": None, "b.y#0": None}, "ok", "cache state unknown"),
    ],
)
def test_statuses(no_compile, monkeypatch, states, status, words):
    from kgreason import heap

    monkeypatch.setattr(heap, "kernel_cache", lambda: states)
    rep = check_kernels()
    assert rep["status"] == status and words in rep["detail"], rep
    if status == "not compiled":
        assert rep["not_cached"] == [k for k, v in states.items() if v is False]


def test_switched_off_needs_no_numba(no_compile, monkeypatch):
    from kgreason import heap

    monkeypatch.setattr(heap, "kernel_cache", lambda: pytest.fail("read the cache"))
    monkeypatch.setenv("KGREASON_JIT", "0")
    rep = check_kernels()
    assert rep["status"] == "partial" and "KGREASON_JIT=0" in rep["detail"]


def test_a_broken_cache_read_is_the_sections_error_only(no_compile, monkeypatch):
    from kgreason import heap

    def broken():
        raise OSError("index unreadable")

    monkeypatch.setattr(heap, "kernel_cache", broken)
    rep = check_kernels()
    assert rep["status"] == "error" and "index unreadable" in rep["detail"]
