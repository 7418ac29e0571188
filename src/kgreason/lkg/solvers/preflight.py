"""Preflight: can each engine really run inside the sandbox, as the sandbox user?

Why: as root the sandbox drops to `nobody`. If the interpreter, the worker script, the
site-packages or the binary is somewhere `nobody` cannot read (a virtualenv under /root,
common in containers), every run fails with an import error that looks like the
program's fault, and the LLM is asked to "repair" a correct program.

Policy (documented in docs/security.md): when the drop is what breaks the engine and
Landlock is active, the engine runs as the calling user with every other layer kept
(Landlock, namespaces, rlimits) and the check says so with the unreadable path and the
fix. Without Landlock the drop is the only filesystem layer, so the engine is
`unavailable` instead. `kgreason doctor` shows these same checks.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kgreason.lkg.solvers.base import SolverLimits, SolverResult
from kgreason.lkg.solvers.isolation import NOBODY
from kgreason.lkg.solvers.sandbox import Sandbox, SandboxRun


@dataclass(frozen=True)
class EngineCheck:
    engine: str
    #: "ok", "degraded" (runs, but without a layer: see detail) or "unavailable"
    status: str
    detail: str
    drop_user: bool

    @property
    def ok(self) -> bool:
        return self.status != "unavailable"


def unreadable_for(paths: Sequence[Path | str], uid: int = NOBODY, gid: int = NOBODY) -> list[str]:
    """For each path, the first component (directory or the file) that `uid` cannot
    traverse or read, by mode bits; symlinks are followed and their targets checked."""
    found: list[str] = []
    seen: set[str] = set()
    todo = [str(p) for p in reversed(paths)]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        parts = Path(p).parts
        for k in range(1, len(parts) + 1):
            cur = str(Path(*parts[:k]))
            try:
                st = os.lstat(cur)
            except OSError:
                found.append(cur)
                break
            if stat.S_ISLNK(st.st_mode):
                target = os.path.join(os.path.dirname(cur), os.readlink(cur))
                todo.append(os.path.normpath(os.path.join(target, *parts[k:])))
                break
            need = stat.S_IXOTH if k < len(parts) or stat.S_ISDIR(st.st_mode) else stat.S_IROTH
            if st.st_uid == uid:
                need <<= 6
            elif st.st_gid == gid:
                need <<= 3
            if not st.st_mode & need:
                found.append(cur)
                break
    return list(dict.fromkeys(found))


def check_engine(
    sandbox: Sandbox,
    engine: str,
    probe: Callable[[bool], SandboxRun],
    good: Callable[[SandboxRun], bool],
    paths: Sequence[Path | str],
) -> EngineCheck:
    """Run `probe(drop_user)` once per sandbox and engine; decide and remember the drop."""
    with sandbox.checks_lock:
        cached = sandbox.checks.get(engine)
    if isinstance(cached, EngineCheck):
        return cached
    iso = sandbox.isolation()

    def failure(run: SandboxRun) -> str:
        if run.infra:
            return run.infra
        text = (run.stderr or run.stdout).strip().splitlines()
        return f"unavailable: {engine} does not start in the sandbox: " + (
            text[-1][:300] if text else f"exit code {run.returncode}"
        )

    if iso.can_drop:
        first = probe(True)
        if first.infra and not iso.filesystem_isolated and sandbox.require_isolation:
            # refused before anything ran: that is the reason, wherever kgreason is installed
            # (naming directories nobody cannot read would hide it: issue 34)
            check = EngineCheck(engine, "unavailable", first.infra, True)
        elif good(first):
            check = EngineCheck(engine, "ok", "runs as nobody", True)
        else:
            closed = unreadable_for(paths)
            bad = ", ".join(closed)
            why = (
                f"{bad} not readable by uid {NOBODY} (nobody)"
                if closed
                else failure(first).removeprefix("unavailable: ")
            )
            fix = (
                f"fix: chmod o+rx {bad} (and the parents), or install kgreason where "
                "nobody can read it"
                if closed
                else "fix: see the message above"
            )
            second = probe(False) if iso.filesystem_isolated else first
            if iso.filesystem_isolated and good(second):
                check = EngineCheck(
                    engine, "degraded",
                    f"runs as the calling user, not nobody: {why}; Landlock, namespaces and "
                    f"rlimits still apply ({fix})", False,
                )  # fmt: skip
            else:
                reason = f"unavailable: {why}" if closed else failure(second)
                check = EngineCheck(engine, "unavailable", f"{reason} ({fix})", True)
    else:
        run = probe(False)
        check = (
            EngineCheck(engine, "ok", "runs as the calling user", False)
            if good(run)
            else EngineCheck(engine, "unavailable", failure(run), False)
        )
    if check.ok:  # an unavailable engine is probed again next time (it may be transient)
        with sandbox.checks_lock:
            sandbox.checks[engine] = check
            sandbox.drop_user[engine] = check.drop_user
    return check


def engine_read_paths(*extra: Path | str) -> list[str]:
    """What an engine may read besides the system: the interpreter's prefixes (for the
    Python workers and wheel-shipped binaries), this package's workers, and `extra`."""
    from kgreason.lkg.solvers.isolation import python_read_paths

    here = str(Path(__file__).resolve().parent)
    more = [str(Path(p).resolve().parent) for p in extra]
    return sorted({*python_read_paths(), here, *more})


#: Limits for a preflight run: generous, it runs once per sandbox and engine.
PREFLIGHT_LIMITS = SolverLimits(cpu_s=10, memory_mb=512, wall_s=60)


def unavailable_result(solver: str, check: EngineCheck, program: str = "") -> SolverResult:
    return SolverResult(
        solver, "unavailable", error_kind="unavailable", error=check.detail, program=program
    )
