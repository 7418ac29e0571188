"""The one-time compile of the graph kernels: kgreason.jit says so in one line on stderr,
once per process, only when numba's disk cache does not hold a loop (disk_cached, read
from the cache's index without compiling); `kgreason kg build` pays it for large stores."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import types

import numpy as np
import pytest
from typer.testing import CliRunner

from kgreason import heap, jit
from kgreason.cli import app

SIG = "int64(int64[::1])"
TOY = """
def _sum_loop(a):
    s = 0
    for x in a:
        s += x
    return s


def _twice(x):
    return 2 * x


def _twice_sum_loop(a):
    s = 0
    for x in a:
        s += _twice(x)
    return s
"""


@pytest.fixture
def fresh_notice(monkeypatch):
    """This process has not printed the notice yet."""
    monkeypatch.setattr(jit, "_noticed", False)


@pytest.fixture
def toy(tmp_path, monkeypatch, fresh_notice):
    """A tiny kernel module in its own file, with an empty numba cache directory."""
    numba = pytest.importorskip("numba")
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba-cache"))
    path = tmp_path / f"toy_kernels_{os.getpid()}_{id(tmp_path)}.py"
    path.write_text(TOY)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert numba
    return mod


def _copy(fn):
    """The same code as a new function object: what a later process's compiled() sees
    (compiled() keeps one compiled form per function object in a process)."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__)


def test_disk_cached_reads_the_index_without_compiling(toy, capsys):
    assert jit.disk_cached(toy._sum_loop, SIG) is False
    fn = jit.compiled(toy._sum_loop, SIG)
    assert fn is not None and fn(np.arange(5, dtype=np.int64)) == 10
    assert jit.disk_cached(toy._sum_loop, SIG) is True
    assert jit.disk_cached(_copy(toy._sum_loop), SIG) is True  # another process's view
    assert jit.disk_cached(toy._sum_loop, "int64(int32[::1])") is False  # another signature
    helpers = (("_twice", toy._twice, "int64(int64)"),)
    assert jit.disk_cached(toy._twice_sum_loop, SIG, helpers) is False
    fn = jit.compiled(toy._twice_sum_loop, SIG, helpers)
    assert fn(np.arange(5, dtype=np.int64)) == 20
    assert jit.disk_cached(toy._twice_sum_loop, SIG, helpers) is True
    with open(toy.__file__, "a") as f:  # an edited source file: numba's cache is stale
        f.write("# edited\n")
    assert jit.disk_cached(toy._sum_loop, SIG) is False


def test_real_compile_prints_the_notice_once_and_a_cached_load_none(toy, capsys, monkeypatch):
    jit.compiled(toy._sum_loop, SIG)
    jit.compiled(toy._sum_loop, "int64(int32[::1])")  # a second compile: no second line
    helpers = (("_twice", toy._twice, "int64(int64)"),)
    jit.compiled(toy._twice_sum_loop, SIG, helpers)
    err = capsys.readouterr().err
    assert err.count(jit.COMPILE_NOTICE) == 1 and err.strip() == jit.COMPILE_NOTICE, err
    monkeypatch.setattr(jit, "_noticed", False)  # as in a later process: all three load
    fn = jit.compiled(_copy(toy._sum_loop), SIG)
    jit.compiled(_copy(toy._twice_sum_loop), SIG, helpers)
    assert fn(np.arange(3, dtype=np.int64)) == 3
    assert capsys.readouterr().err == ""


@pytest.fixture
def stub_numba(monkeypatch, fresh_notice):
    """kgreason.jit's compile seam (_njit) stubbed: the plain function stands for its
    compiled form, and numba's cache answers what the test says (no real compile)."""
    calls: list[str] = []

    def fake_njit(numba, fn, signature):
        calls.append(fn.__name__)
        return fn

    monkeypatch.setattr(jit, "_njit", fake_njit)
    return calls


def _loops(n: int) -> list:
    def make(i):
        def loop(a):
            return a + i

        loop.__name__ = f"loop{i}"
        return loop

    return [make(i) for i in range(n)]


def test_many_compiles_one_line(stub_numba, monkeypatch, capsys):
    pytest.importorskip("numba")
    monkeypatch.setattr(jit, "disk_cached", lambda *a, **k: False)
    loops = _loops(6)
    ts = [threading.Thread(target=jit.compiled, args=(f, SIG)) for f in loops[:3]]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for f in loops[3:]:
        jit.compiled(f, SIG)
    assert sorted(stub_numba) == sorted(f.__name__ for f in loops)  # all six "compiled"
    assert capsys.readouterr().err.count(jit.COMPILE_NOTICE) == 1


def test_no_line_when_cached_or_unknown(stub_numba, monkeypatch, capsys):
    pytest.importorskip("numba")
    for state in (True, None):
        monkeypatch.setattr(jit, "disk_cached", lambda *a, state=state, **k: state)
        for f in _loops(3):
            assert jit.compiled(f, SIG) is not None
    assert len(stub_numba) == 6
    assert capsys.readouterr().err == ""


def test_disk_cached_without_numba(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    monkeypatch.setitem(sys.modules, "numba.core.caching", None)
    assert jit.disk_cached(_loops(1)[0], SIG) is None


# `kgreason kg build`: the command that pays the one-time compile, for stores that use it


@pytest.fixture
def build(tmp_path, monkeypatch, fresh_notice):
    """Run `kg build --json` on a 40-triple file with warm_all stubbed (it prints the
    notice, as a real compile does); returns (run, warm calls)."""
    monkeypatch.delenv("KGREASON_JIT", raising=False)
    monkeypatch.chdir(tmp_path)
    tsv = tmp_path / "kg.tsv"
    tsv.write_text("".join(f"e{i}\tr{i % 3}\te{i + 1}\n" for i in range(40)))
    calls: list[int] = []

    def fake_warm_all():
        calls.append(1)
        jit.announce_compile()
        return True

    monkeypatch.setattr(heap, "warm_all", fake_warm_all)
    monkeypatch.setattr(heap, "kernel_cache", lambda: {"a.x#0": True, "b.y#0": False})

    def run(*extra: str):
        out = tmp_path / f"store{len(list(tmp_path.glob('store*')))}"
        r = CliRunner().invoke(app, ["kg", "build", str(tsv), "--out", str(out), *extra])
        assert r.exit_code == 0, r.output
        return r

    return run, calls


def test_small_store_build_does_not_compile(build):
    run, calls = build
    r = run("--json")
    assert json.loads(r.stdout)["kernels"] == "small" and calls == []
    assert jit.COMPILE_NOTICE not in r.stderr


def test_large_store_build_compiles_once_with_one_line(build, monkeypatch):
    run, calls = build
    monkeypatch.setattr(heap, "WARM_KERNELS_TRIPLES", 40)
    r = run("--json")
    assert json.loads(r.stdout)["kernels"] == "compiled" and calls == [1]
    assert r.stderr.count(jit.COMPILE_NOTICE) == 1
    r = run()  # human form: the summary, then the compile
    assert "built " in r.stdout and calls == [1, 1]


def test_build_flags_and_a_warm_cache(build, monkeypatch):
    run, calls = build
    assert json.loads(run("--json", "--warm").stdout)["kernels"] == "compiled"  # any size
    assert calls == [1]
    monkeypatch.setattr(heap, "WARM_KERNELS_TRIPLES", 40)
    assert json.loads(run("--json", "--no-warm").stdout)["kernels"] == "off"
    monkeypatch.setenv("KGREASON_JIT", "0")
    assert json.loads(run("--json").stdout)["kernels"] == "off"
    monkeypatch.delenv("KGREASON_JIT")
    monkeypatch.setattr(heap, "kernel_cache", lambda: {"a.x#0": True, "b.y#0": True})
    r = run("--json")
    assert json.loads(r.stdout)["kernels"] == "cached" and calls == [1]  # nothing to do
    assert jit.COMPILE_NOTICE not in r.stderr


def test_a_failed_warm_does_not_fail_the_build(build, monkeypatch):
    run, _ = build

    def broken():
        raise RuntimeError("llvm exploded")

    monkeypatch.setattr(heap, "warm_all", broken)
    r = run("--json", "--warm")
    assert json.loads(r.stdout)["kernels"] == "failed"
    assert "llvm exploded" in r.stderr and "compile on first use" in r.stderr
