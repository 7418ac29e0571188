"""`kgreason serve --workers N`: N processes answering on one listening socket.

Why: a process answers LLM-free questions one at a time (CPU-bound, on one worker thread),
so one server uses one core for them; more processes use more cores.

How: the supervisor (the process the user started) binds the socket, then forks the
workers BEFORE anything is loaded. Each worker loads its own warm state (KG, embedder,
ranker, LLM client) and runs uvicorn on the inherited socket; the kernel hands each new
connection to one of them. Loading after the fork rather than before costs memory (each
worker holds its own models; the KG store is memory-mapped, so its pages are shared) and
startup time, but no state crosses a fork: SQLite connections (the LLM cache), thread pools
and HTTP clients are each process's own.

The supervisor:
- waits until every worker listens (a byte on a pipe), then announces the address once;
- a worker that exits before it listens is a startup failure (a bad KG, a port in use...):
  the others are stopped and the supervisor exits 1 (its message is on stderr already);
- a worker that dies later is replaced, at most MAX_RESTARTS times per RESTART_WINDOW_S
  (then everything stops, exit 1);
- SIGTERM or SIGINT: each worker gets one SIGTERM, finishes its in-flight requests (the
  grace period of one process) and exits; the supervisor exits 0 when all exited 0.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

#: replacements of workers that died after starting, within RESTART_WINDOW_S, before giving up
MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: any free one), inheritable by forks."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


@dataclass
class Supervisor:
    """Runs `worker(index, sock, ready)` in `n` forked processes (see the module doc).
    `ready()` is what a worker calls once it listens; `say` writes the supervisor's lines."""

    sock: socket.socket
    n: int
    worker: Callable[[int, socket.socket, Callable[[], None]], int]
    say: Callable[[str], None]
    children: dict[int, int] = field(default_factory=dict)  # pid -> worker index
    ready: set[int] = field(default_factory=set)  # indices listening
    restarts: list[float] = field(default_factory=list)
    stopping: bool = False
    failed: bool = False

    def run(self) -> int:
        """Serve until told to stop; the process's exit code."""
        r, w = os.pipe()
        self._pipe = (r, w)
        old = {s: signal.signal(s, self._stop) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            for i in range(self.n):
                self._spawn(i)
            announced = False
            codes: list[int] = []
            while self.children:
                readable, _, _ = select.select([r], [], [], 0.2)
                if readable:
                    for b in os.read(r, 64):
                        self.ready.add(int(b))
                if not announced and len(self.ready) == self.n and not self.stopping:
                    announced = True
                    self.say(f"listening on {url_of(self.sock)} ({self.n} workers)")
                self._reap(codes)
            return 1 if self.failed or any(codes) else 0
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            os.close(r)
            os.close(w)

    def _spawn(self, index: int) -> None:
        r, w = self._pipe
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            code = 1
            try:
                for s in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(s, signal.SIG_DFL)  # uvicorn installs its own
                os.close(r)

                def ready() -> None:
                    os.write(w, bytes([index]))

                code = self.worker(index, self.sock, ready)
            except SystemExit as e:  # the CLI's fail(): its message is printed already
                code = e.code if isinstance(e.code, int) else 1
            except BaseException:
                traceback.print_exc()
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        self.children[pid] = index

    def _stop(self, signum: int, frame: object) -> None:
        if self.stopping:
            return
        self.stopping = True
        for pid in list(self.children):  # one SIGTERM each: a second SIGINT would cut them
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def _reap(self, codes: list[int]) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            index = self.children.pop(pid, None)
            if index is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            if self.stopping:
                codes.append(code)
                continue
            if index not in self.ready:
                self.say(f"worker {index} exited ({_how(code)}) before it listened: stopping")
                self.failed = True
                self._stop(signal.SIGTERM, None)
                continue
            now = time.monotonic()
            self.restarts = [t for t in self.restarts if now - t < RESTART_WINDOW_S]
            if len(self.restarts) >= MAX_RESTARTS:
                self.say(
                    f"worker {index} exited ({_how(code)}); {MAX_RESTARTS} restarts in "
                    f"{RESTART_WINDOW_S:g} s already: stopping"
                )
                self.failed = True
                self._stop(signal.SIGTERM, None)
                continue
            self.restarts.append(now)
            self.say(f"worker {index} exited ({_how(code)}): starting a new one")
            self.ready.discard(index)
            self._spawn(index)


def _how(code: int) -> str:
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"
