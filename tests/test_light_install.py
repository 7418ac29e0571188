"""The light install has no numba (issue 34: llvmlite alone is ~170 MB). Without it every
kernel falls back to numpy with the same answers; what a large KG then costs is said once,
by `kg build`'s warm-up and by `doctor`, with the extra that fixes it."""

from __future__ import annotations

import sys

import pytest

from kgreason import heap, jit
from kgreason.cli.doctor import check_kernels


@pytest.fixture
def no_numba(monkeypatch):
    """numba cannot be imported (as after `pip install kgreason`)."""
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba -> ImportError
    monkeypatch.delenv("KGREASON_JIT", raising=False)


def test_numba_installed_is_false_without_importing_it(no_numba):
    assert jit.numba_installed() is False


def test_a_large_builds_warm_up_says_what_it_costs(no_numba, capsys):
    assert heap.warm_built_store(10_000_000) == "numpy"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "kgreason[jit]" in err and "same answers" in err


def test_a_small_build_says_nothing(no_numba, capsys):
    assert heap.warm_built_store(1_000) == "small"
    assert capsys.readouterr().err == ""


def test_serve_warm_up_says_it_too(no_numba, capsys):
    assert jit.warm(["kgreason.pog.arrays.kernels.rows"]) is False
    assert "kgreason[jit]" in capsys.readouterr().err


def test_doctor_names_the_extra(no_numba):
    rep = check_kernels()
    assert rep["status"] == "partial" and "kgreason[jit]" in rep["detail"]


def test_kernels_fall_back_to_numpy(no_numba, monkeypatch):
    monkeypatch.setenv("KGREASON_JIT", "1")
    jit.compiled.cache_clear()
    try:
        from kgreason.pog.arrays.kernels import rows

        loop, sig, *_ = rows.LOOPS[0]
        assert jit.compiled(loop, sig) is None
    finally:
        jit.compiled.cache_clear()
