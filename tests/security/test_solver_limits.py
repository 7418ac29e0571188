"""Processes a program starts: bounded in number and all gone when the run ends.

Before the fix: no RLIMIT_NPROC, and a `setsid` child left the run's process group and
outlived the run (only the group was killed)."""

from __future__ import annotations

import os
import signal
import time
import uuid

from kgreason.lkg.solvers import Sandbox, SolverLimits


def _alive_with(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        pids.append(int(entry))
            except OSError:
                continue
    return pids


def _wait_gone(marker: str, seconds: float = 5.0) -> list[int]:
    """Polls until no process carries the marker; returns what is left (no timing asserted)."""
    deadline = time.monotonic() + seconds
    left = _alive_with(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _alive_with(marker)
    return left


def test_a_setsid_child_does_not_outlive_the_run(sandbox):
    marker = f"kgr-orphan-{uuid.uuid4().hex}"
    script = (
        f"setsid /bin/bash -c 'exec -a {marker} sleep 300' </dev/null >/dev/null 2>&1 & "
        "pid=$!; sleep 0.5; kill -0 $pid && echo alive"
    )
    run = sandbox.run(["/bin/bash", "-c", script], drop=False)
    assert run.stdout.strip() == "alive", run.stderr  # it was running when the run ended
    left = _wait_gone(marker)
    try:
        assert left == [], f"processes outlived the run: {left}"
    finally:
        for pid in left:
            os.kill(pid, signal.SIGKILL)


def test_a_fork_bomb_is_bounded_and_cleaned_up():
    box = Sandbox(SolverLimits(cpu_s=5, memory_mb=256, wall_s=4), max_processes=32)
    marker = f"kgr-bomb-{uuid.uuid4().hex}"
    bomb = f"b() {{ b | b & }}; b; exec -a {marker} sleep 60"
    run = box.run(["/bin/bash", "-c", bomb], drop=False)
    assert run.infra is None
    left = _wait_gone(marker)
    assert left == []


def test_the_process_limit_is_enforced(sandbox):
    """As root the run drops to nobody (root itself is exempt from RLIMIT_NPROC); as a
    normal user the count is per user namespace."""
    box = Sandbox(SolverLimits(cpu_s=5, memory_mb=256, wall_s=20), max_processes=8)
    script = "for i in $(seq 40); do sleep 5 & done 2>&1 | head -1; echo done"
    run = box.run(["/bin/bash", "-c", script], drop=os.geteuid() == 0)
    assert (
        "fork" in (run.stdout + run.stderr).lower()
        or "resource" in (run.stdout + run.stderr).lower()
    )
