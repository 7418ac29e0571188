"""The sandbox itself: limits with named reasons, private directory, environment, network."""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
import threading

import pytest

from kgreason.lkg.solvers import Sandbox, SolverLimits, available

PY = [sys.executable, "-I", "-c"]


def test_cpu_memory_wall_reasons(sandbox):
    res = sandbox.run(
        [*PY, "while True: pass"], limits=SolverLimits(cpu_s=1, memory_mb=512, wall_s=10)
    )
    assert res.limit_hit == "cpu" and res.reason == "cpu time limit 1s exceeded"
    res = sandbox.run([*PY, "x = bytearray(600 * 2**20)"], limits=SolverLimits(5, 200, 10))
    assert res.limit_hit == "memory" and res.reason == "memory limit 200 MB exceeded"
    res = sandbox.run(["/bin/sleep", "5"], limits=SolverLimits(5, 200, 0.3))
    assert res.limit_hit == "wall" and res.reason == "wall clock 0.3s exceeded" and res.time_s < 3


def test_output_flood_is_stopped():
    box = Sandbox(SolverLimits(5, 512, 10), max_output=1 << 20)
    res = box.run([*PY, "import sys\nwhile True: sys.stdout.write('x' * 65536)"])
    assert res.limit_hit == "output" and res.reason == "output limit 1 MB exceeded"
    assert len(res.stdout) <= 1 << 20


def test_limits_without_prlimit_use_the_preexec_fallback():
    box = Sandbox(SolverLimits(1, 200, 10))
    box._isolation = dataclasses.replace(box.isolation(), prlimit=None)
    res = box.run([*PY, "while True: pass"])
    assert res.reason == "cpu time limit 1s exceeded"
    res = box.run([*PY, "x = bytearray(600 * 2**20)"])
    assert res.reason == "memory limit 200 MB exceeded"


def test_private_dir_env_and_stdin(sandbox, monkeypatch):
    monkeypatch.setenv("KGR_SECRET_TOKEN", "s3cr3t")
    code = (
        "import os, sys; print(os.getcwd()); print(sorted(os.environ));"
        "print(repr(sys.stdin.read())); print(open('data.txt').read())"
    )
    res = sandbox.run([*PY, code], files={"data.txt": "hello"})
    cwd, env, stdin, data = res.stdout.splitlines()[:4]
    assert "kgr-solver-" in cwd and not os.path.exists(cwd)  # deleted afterwards
    assert "KGR_SECRET_TOKEN" not in env and "HOME" in env
    assert stdin == "''" and data == "hello"


def test_cannot_read_root_only_files(sandbox, tmp_path):
    if not sandbox.isolation().drops_privileges:
        pytest.skip("not running as root: no privilege drop to test")
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    secret.chmod(0o600)
    os.chmod(tmp_path, 0o755)
    res = sandbox.run([*PY, f"print(open({str(secret)!r}).read())"])
    assert "top secret" not in res.stdout and "PermissionError" in res.stderr


def _listener() -> tuple[socket.socket, int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    threading.Thread(target=lambda: srv.accept(), daemon=True).start()
    return srv, srv.getsockname()[1]


def test_no_network_inside_the_sandbox(sandbox):
    if not sandbox.isolation().network_isolated:
        pytest.skip(f"network isolation unavailable here: {sandbox.isolation().note}")
    srv, port = _listener()
    code = (
        "import socket\ntry:\n"
        f" socket.create_connection(('127.0.0.1', {port}), timeout=2); print('CONNECTED')\n"
        "except OSError as e:\n print('BLOCKED', e)"
    )
    try:
        res = sandbox.run([*PY, code])
        assert res.stdout.startswith("BLOCKED")
        # the same probe outside a network namespace connects: the test can fail
        open_box = Sandbox(SolverLimits(5, 512, 10), isolate_network=False)
        assert open_box.run([*PY, code]).stdout.startswith("CONNECTED")
    finally:
        srv.close()


def test_available_reports_every_engine(sandbox):
    info = available(sandbox)
    assert set(info) == {"z3", "prover9", "clingo", "sandbox"}
    assert info["prover9"].startswith("Prover9 2009-11A")
    assert "Z3 version" in info["z3"] or "library worker" in info["z3"]
    assert info["clingo"].startswith("clingo ")
