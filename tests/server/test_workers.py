"""`kgreason serve --workers N` (server/workers.py): the supervisor's rules on fake workers
(fork, no server), then the real server as a user runs it: both workers answer on one port,
a killed worker is replaced, SIGTERM stops all cleanly, a worker that cannot start stops all."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from kgreason.server import workers as W

SRC = Path(__file__).resolve().parents[2] / "src"


def _supervise(worker, n: int = 2, stop_after: float | None = None) -> tuple[int, list[str]]:
    """Supervisor(...).run() on fake workers; SIGTERM to this process after `stop_after` s."""
    lines: list[str] = []
    with W.bind("127.0.0.1", 0) as sock:
        sup = W.Supervisor(sock, n, worker, lines.append)
        timer = None
        if stop_after is not None:
            timer = threading.Timer(stop_after, os.kill, (os.getpid(), signal.SIGTERM))
            timer.start()
        try:
            code = sup.run()
        finally:
            if timer is not None:
                timer.cancel()
    return code, lines


def _until_term(index: int, sock: socket.socket, ready: Callable[[], None]) -> int:
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    ready()
    t_end = time.monotonic() + 20
    while not stop and time.monotonic() < t_end:
        time.sleep(0.02)
    return 0 if stop else 9


def test_workers_start_announce_once_and_stop_on_sigterm() -> None:
    code, lines = _supervise(_until_term, n=3, stop_after=1.5)
    assert code == 0, lines
    assert [x for x in lines if x.startswith("listening on http://127.0.0.1:")] == [lines[0]]
    assert lines[0].endswith("(3 workers)")


def test_a_worker_failing_before_it_listens_stops_them_all() -> None:
    def worker(index: int, sock: socket.socket, ready: Callable[[], None]) -> int:
        if index == 1:
            return 3  # e.g. its KG could not be opened
        return _until_term(index, sock, ready)

    t0 = time.monotonic()
    code, lines = _supervise(worker)
    assert code == 1 and time.monotonic() - t0 < 15  # the others were told to stop
    assert "worker 1 exited (exit code 3) before it listened: stopping" in lines
    assert not any(x.startswith("listening") for x in lines)


def test_a_worker_dying_later_is_replaced_then_a_crash_loop_stops(monkeypatch) -> None:
    monkeypatch.setattr(W, "MAX_RESTARTS", 2)

    def worker(index: int, sock: socket.socket, ready: Callable[[], None]) -> int:
        ready()
        time.sleep(0.3)
        if index == 0:  # worker 0 keeps dying
            os._exit(7)
        return _until_term(index, sock, lambda: None)

    code, lines = _supervise(worker)
    assert code == 1
    assert lines.count("worker 0 exited (exit code 7): starting a new one") == 2
    assert "worker 0 exited (exit code 7); 2 restarts in 60 s already: stopping" in lines


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_"))}
    return env | {"PYTHONPATH": str(SRC)}


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def _wait(cond: Callable[[], bool], what: str, seconds: float = 90) -> None:
    t_end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < t_end, what
        time.sleep(0.1)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_serve_with_two_workers(tmp_path: Path) -> None:
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kgreason", "serve", "--port", "0", "--llm-free",
             "--workers", "2"],
            env=_env(), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err, text=True,
        )  # fmt: skip
    try:
        _wait(lambda: "listening on" in err_path.read_text() or proc.poll() is not None, "start")
        assert proc.poll() is None, err_path.read_text()
        line = next(x for x in err_path.read_text().splitlines() if "listening on" in x)
        url = line.split("listening on ")[1].split("/ ")[0]
        assert line.endswith("(2 workers)")
        first = _children(proc.pid)
        assert len(first) == 2

        def worker_of_a_new_connection() -> int:
            r = httpx.get(url + "/healthz", headers={"Connection": "close"}, timeout=30)
            return int(r.json()["worker"])

        seen: set[int] = set()
        for _ in range(300):  # the kernel hands each connection to one of them
            seen.add(worker_of_a_new_connection())
            if seen == {0, 1}:
                break
        assert seen == {0, 1}
        r = httpx.post(url + "/v1/ask", json={"question": "who directed [Once Were Warriors]"},
                       timeout=60)  # fmt: skip
        assert r.status_code == 200 and r.json()["answers"][0]["name"] == "Lee Tamahori"
        # a worker killed outright is replaced, and the port keeps answering
        os.kill(first[0], signal.SIGKILL)
        _wait(lambda: len(set(_children(proc.pid)) - set(first)) == 1, "no new worker")
        _wait(lambda: err_path.read_text().count("LLM-free mode") == 2, "new worker not up")
        assert "exited (killed by SIGKILL): starting a new one" in err_path.read_text()
        for _ in range(20):
            assert worker_of_a_new_connection() in (0, 1)
        workers = _children(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, err_path.read_text()
    for pid in workers:  # every worker is gone (reaped by the supervisor)
        assert not Path(f"/proc/{pid}").exists()


def test_workers_that_cannot_start_stop_the_server(tmp_path: Path) -> None:
    (tmp_path / "not-a-store").mkdir()
    r = subprocess.run(
        [sys.executable, "-m", "kgreason", "serve", "--port", "0", "--llm-free",
         "--workers", "2", "--kg", str(tmp_path / "not-a-store")],
        env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert r.returncode == 1
    assert "not a kgreason store" in r.stderr
    assert "before it listened: stopping" in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: stopped: a worker failed")
