"""kgreason.heap: what is alive when the server starts serving is frozen, later garbage is
still collected."""

from __future__ import annotations

import subprocess
import sys


def test_freeze_warm_state_freezes_and_later_cycles_are_still_collected():
    # in a child process: freezing is process-wide and must not leak into the test run
    code = """
import gc, weakref
from kgreason.heap import freeze_warm_state
class Node:
    pass
warm = Node(); warm.self = warm  # a cycle alive at startup
n = freeze_warm_state()
assert n > 0 and gc.get_freeze_count() == n
later = Node(); later.self = later  # garbage made after startup
ref = weakref.ref(later)
del later
gc.collect()
assert ref() is None, "a cycle made after freezing was not collected"
print("ok", n)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok ")


def test_serve_freezes_before_running(monkeypatch):
    import kgreason
    from kgreason.server import run

    calls: list[str] = []

    class FakeServer:
        announce = None

        def run(self) -> None:
            calls.append("run")

    monkeypatch.setattr(run, "uvicorn_server", lambda *a, **k: FakeServer())
    monkeypatch.setattr(kgreason, "freeze_warm_state", lambda: calls.append("freeze") or 0)
    run.serve(object(), object())  # type: ignore[arg-type]
    assert calls == ["freeze", "run"]
