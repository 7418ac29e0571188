"""Run an engine in a subprocess that fails closed: private temp dir, Landlock, namespaces,
rlimits, a minimal environment, stdin closed, and every process killed at the end.

Why a subprocess for everything: the programs come from an LLM (or a user's file), and the
engines themselves can loop or allocate without bound; an in-process call cannot be
stopped safely. The layers and how they are detected are in `isolation.py`; the engine
launcher (limits, user drop, Landlock, exec) is `_launch.py`. When a required layer is
missing (no Landlock and `require_isolation`), nothing runs: the result says
`unavailable: ...` instead.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from kgreason.lkg.solvers import _launch
from kgreason.lkg.solvers.base import SolverLimits, SolverResult
from kgreason.lkg.solvers.isolation import NOBODY, SYSTEM_READ, Isolation, detect
from kgreason.tracing import call_span

log = logging.getLogger("kgreason.lkg.solvers")

_MEMORY_MARKERS = (
    "out of memory",
    "memoryerror",
    "bad_alloc",
    "cannot allocate memory",
    "failed to allocate",
    "palloc",  # LADR's allocator
    "memory exhausted",
)


@dataclass(frozen=True)
class SandboxRun:
    returncode: int | None
    stdout: str
    stderr: str
    time_s: float
    cpu_s: float
    #: "cpu", "memory", "wall" or "output" when a limit stopped the program.
    limit_hit: str | None
    #: e.g. "cpu time limit 5s exceeded".
    reason: str | None
    network_isolated: bool
    #: "unavailable: ..." when the sandbox itself could not run the engine (not the
    #: program's fault: never shown to the LLM for repair).
    infra: str | None = None


def _status(run: SandboxRun) -> str:
    if run.infra:
        return run.infra
    if run.limit_hit:
        return f"{run.limit_hit} limit ({run.reason})"
    return f"exit {run.returncode}"


def _fmt(x: float) -> str:
    return f"{x:g}"


class Sandbox:
    """Subprocess runner. Holds the detected isolation and the per-engine preflight
    decisions, so both happen once per object."""

    def __init__(
        self,
        limits: SolverLimits | None = None,
        *,
        isolate_network: bool = True,
        max_output: int = 16 << 20,
        max_processes: int = 64,
        require_isolation: bool = True,
        native_launcher: bool = True,
    ):
        self.limits = limits or SolverLimits()
        #: bytes kept per stream; a program that prints more is killed ("output" limit)
        self.max_output = max_output
        #: RLIMIT_NPROC for the sandbox user
        self.max_processes = max_processes
        #: refuse to run when Landlock is unavailable (fail closed)
        self.require_isolation = require_isolation
        self._want_netns = isolate_network
        self._native = native_launcher
        self._isolation: Isolation | None = None
        self._lock = threading.Lock()
        #: engine name -> preflight outcome (see preflight.py)
        self.checks: dict[str, object] = {}
        self.checks_lock = threading.Lock()
        #: engine name -> whether its runs drop to `nobody`
        self.drop_user: dict[str, bool] = {}

    def isolation(self) -> Isolation:
        with self._lock:
            if self._isolation is None:
                self._isolation = detect(want_netns=self._want_netns, native=self._native)
            return self._isolation

    # ---- running --------------------------------------------------------------------
    def run(
        self,
        argv: list[str],
        *,
        files: dict[str, str] | None = None,
        limits: SolverLimits | None = None,
        extra_env: dict[str, str] | None = None,
        read: Sequence[str] = (),
        engine: str | None = None,
        drop: bool | None = None,
    ) -> SandboxRun:
        """Run `argv` in a fresh temporary directory holding `files` (name -> text).

        Relative names in argv resolve inside that directory (it is the cwd). `read`
        lists the extra paths the engine may read (its binary, interpreter, packages).
        The user drop (root only) follows `drop`, else the engine's preflight decision.
        """
        lim = limits or self.limits
        iso = self.isolation()
        if not iso.filesystem_isolated and self.require_isolation:
            return _infra(
                "unavailable: no filesystem isolation (Landlock is not available on this "
                "kernel); refusing to run solver programs. Sandbox(require_isolation=False) "
                "runs them with the remaining layers",
                iso,
            )
        if drop is None:
            drop = self.drop_user.get(engine or "", True)
        uid = NOBODY if (drop and iso.can_drop) else None
        workdir = tempfile.mkdtemp(prefix="kgr-solver-")
        try:
            for name, text in (files or {}).items():
                if "/" in name or name.startswith(".") or "\x00" in name:
                    raise ValueError(f"sandbox file name must be plain, got {name!r}")
                with open(os.path.join(workdir, name), "w", encoding="utf-8") as fh:
                    fh.write(text)
            if uid is not None:
                os.chown(workdir, uid, uid)
                for name in files or {}:
                    os.chown(os.path.join(workdir, name), uid, uid)
            env = {"PATH": "/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir,
                   "LANG": "C.UTF-8", **(extra_env or {})}  # fmt: skip
            cpu = max(1, int(lim.cpu_s + 0.999))
            rlimits = {
                "RLIMIT_CPU": f"{cpu}:{cpu + 1}",  # SIGXCPU first, SIGKILL a second later
                "RLIMIT_AS": lim.memory_mb * 1024 * 1024,
                "RLIMIT_CORE": 0,
                "RLIMIT_FSIZE": 64 << 20,
            }
            opts = [x for k, v in rlimits.items() for x in ("-r", f"{k}={v}")]
            opts += ["-p", str(self.max_processes)]
            if uid is not None:
                opts += ["-u", str(uid)]
            if iso.filesystem_isolated:
                opts.append("-l")
                opts += [x for p in (*SYSTEM_READ, *read) for x in ("-R", p)]
                opts += [x for p in (workdir, "/dev/null") for x in ("-W", p)]
            if argv and "/" not in argv[0]:
                found = shutil.which(argv[0], path=env["PATH"])
                argv = [found or argv[0], *argv[1:]]
            cmd = [*iso.prefix, *iso.launcher, *opts, "--"]
            name = engine or os.path.basename(argv[0] if argv else "?")
            with call_span("solver", engine=name):
                res = self._run([*cmd, *argv], workdir, env, lim, cpu, iso)
            log.debug("%s: %s in %.3f s (cpu %.3f s)", name, _status(res), res.time_s, res.cpu_s)
            return res
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _run(
        self,
        cmd: list[str],
        cwd: str,
        env: dict[str, str],
        lim: SolverLimits,
        cpu: int,
        iso: Isolation,
    ) -> SandboxRun:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,  # the launcher passes its environment on to the engine
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        out, err = bytearray(), bytearray()
        fired = threading.Event()
        flooded = threading.Event()

        def kill_all() -> None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            if not iso.pid_namespace:
                _kill_session(proc.pid)

        def drain(stream: IO[bytes], sink: bytearray) -> None:
            """Read everything, keep at most max_output bytes; a flood kills the group."""
            for chunk in iter(lambda: stream.read1(1 << 16), b""):  # type: ignore[attr-defined]
                room = self.max_output - len(sink)
                if room > 0:
                    sink += chunk[:room]
                if len(chunk) > room and not flooded.is_set():
                    flooded.set()
                    kill_all()

        readers = [
            threading.Thread(target=drain, args=(proc.stdout, out), daemon=True),
            threading.Thread(target=drain, args=(proc.stderr, err), daemon=True),
        ]
        for r in readers:
            r.start()

        def on_timeout() -> None:
            fired.set()
            kill_all()

        timer = threading.Timer(lim.wall_s, on_timeout)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        kill_all()  # whatever is left of the group (the pid namespace is already gone)
        for r in readers:
            r.join(timeout=2)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        elapsed = time.perf_counter() - t0
        cpu_used = usage.ru_utime + usage.ru_stime
        stdout = out.decode("utf-8", "replace")
        stderr = err.decode("utf-8", "replace")
        rc = proc.returncode
        mark = stderr.rfind(_launch.SIGNAL_MARK)
        if mark >= 0 and rc is not None and rc > 128:
            with contextlib.suppress(ValueError):
                sig = int(stderr[mark + len(_launch.SIGNAL_MARK) :].split()[0])
                if sig == rc - 128:
                    rc, stderr = -sig, stderr[:mark].rstrip("\n")
        if rc == _launch.EXIT_SANDBOX and "kgr-sandbox:" in stderr:
            line = stderr[stderr.index("kgr-sandbox:") :].splitlines()[0]
            return _infra(f"unavailable: the sandbox could not start the engine: {line}", iso)
        mem = lim.memory_mb * 1024 * 1024
        limit_hit: str | None = None
        reason: str | None = None
        # stderr only: some engines echo their input (which may contain any word) on stdout
        text = stderr[-3000:].lower()
        if flooded.is_set():
            limit_hit, reason = "output", f"output limit {self.max_output >> 20} MB exceeded"
        elif fired.is_set():
            limit_hit, reason = "wall", f"wall clock {_fmt(lim.wall_s)}s exceeded"
        elif (
            rc == -signal.SIGXCPU  # only RLIMIT_CPU sends it
            or (rc == -signal.SIGKILL and cpu_used >= cpu - 0.5)  # the hard limit
            or cpu_used >= cpu - 0.25  # engines that catch SIGXCPU and exit "cleanly" (z3)
        ):
            limit_hit, reason = "cpu", f"cpu time limit {_fmt(lim.cpu_s)}s exceeded"
        elif (rc != 0 and any(m in text for m in _MEMORY_MARKERS)) or (
            rc is not None and rc < 0 and usage.ru_maxrss * 1024 >= 0.8 * mem
        ):
            limit_hit, reason = "memory", f"memory limit {lim.memory_mb} MB exceeded"
        return SandboxRun(
            rc, stdout, stderr, elapsed, cpu_used, limit_hit, reason, iso.network_isolated
        )


def _infra(reason: str, iso: Isolation) -> SandboxRun:
    return SandboxRun(None, "", "", 0.0, 0.0, None, None, iso.network_isolated, infra=reason)


def _kill_session(sid: int) -> None:
    """Without a pid namespace: SIGKILL every process still in the run's session."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid:  # field 6 (session) after pid and (comm)
                os.kill(int(entry), signal.SIGKILL)


_LIMIT_STATUS = {
    "cpu": ("timeout", "cpu_limit"),
    "wall": ("timeout", "wall_clock"),
    "memory": ("memory", "memory_limit"),
    "output": ("solver_error", "output_limit"),
}


def apply_limit(run: SandboxRun, res: SolverResult) -> bool:
    """Mark `res` failed with the named reason when a limit (or the sandbox) stopped it."""
    if run.infra:
        res.status, res.error_kind, res.error = "unavailable", "unavailable", run.infra
        return True
    if not run.limit_hit:
        return False
    res.status, res.error_kind = _LIMIT_STATUS[run.limit_hit]  # type: ignore[assignment]
    res.error = run.reason
    return True
