"""Which isolation layers this machine gives the sandbox, detected by trying them.

Layers (each reported by `kgreason doctor`):
- Landlock (kernel LSM, works for root and normal users alike): the engine may read and
  execute only system and engine paths and write only its private temp dir; no TCP;
  no signals to processes outside the sandbox.
- Namespaces via util-linux `unshare`: a network namespace (no network at all) and a PID
  namespace whose init is the engine, so every process it starts, `setsid` or not, is
  killed by the kernel when it exits. Root uses them directly; a normal user through a
  user namespace (`unshare -r`).
- User drop: as root, the engine runs as `nobody` unless that user cannot read the engine
  (then the other layers are kept and a warning is given; see preflight.py).
- rlimits: CPU, address space, file size, core, and process count (RLIMIT_NPROC).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kgreason.lkg.solvers import _launch

NOBODY = 65534
LAUNCHER = str(Path(_launch.__file__).resolve())
#: What every engine may read: the system's binaries, libraries, locale data and the
#: dynamic loader's cache. Engine-specific paths (interpreter prefix, site-packages,
#: binary) are added per run.
SYSTEM_READ = (
    "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/ld.so.cache",
    "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/dev/urandom", "/dev/zero",
)  # fmt: skip


@dataclass(frozen=True)
class Isolation:
    """How the sandbox wraps commands here (detected once per Sandbox)."""

    #: namespace wrapper (unshare ...) or ()
    prefix: tuple[str, ...]
    network_isolated: bool
    pid_namespace: bool
    #: 0 when Landlock is unavailable
    landlock_abi: int
    #: running as root, so the engine can drop to `nobody`
    can_drop: bool
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: command that starts the launcher: the compiled `_launch.c`, or Python on _launch.py
    launcher: tuple[str, ...] = (sys.executable, "-I", "-S", LAUNCHER)

    @property
    def filesystem_isolated(self) -> bool:
        return self.landlock_abi > 0

    def layers(self) -> list[str]:
        out = []
        out.append(
            f"landlock ABI {self.landlock_abi} (read-only system view, private temp dir)"
            if self.landlock_abi
            else "NO FILESYSTEM ISOLATION (Landlock unavailable)"
        )
        out.append("network namespace" if self.network_isolated else "NETWORK OPEN")
        out.append(
            "pid namespace (all children die with the run)"
            if self.pid_namespace
            else "no pid namespace (process group killed; setsid children may survive)"
        )
        out.append("rlimits cpu/as/fsize/core/nproc")
        native = not self.launcher[0].endswith(("python", "python3")) and len(self.launcher) == 1
        out.append("native launcher" if native else "python launcher")
        return out


def _probe(argv: list[str]) -> bool:
    try:
        r = subprocess.run(
            [*argv, "/bin/true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def detect(*, want_netns: bool = True, native: bool = True) -> Isolation:
    """Try each layer on this machine and keep the ones that work."""
    notes: list[str] = []
    abi = _launch.landlock_abi(ctypes.CDLL(None, use_errno=True))
    root = os.geteuid() == 0
    unshare = shutil.which("unshare", path="/usr/bin:/bin")
    prefix: tuple[str, ...] = ()
    net = pid = False
    if not unshare:
        notes.append("util-linux unshare not found")
    else:
        user = [] if root else ["-r"]
        pidns = ["--pid", "--fork", "--kill-child"]
        netns = ["--net"] if want_netns else []
        for cand, has_net in (([*user, *netns, *pidns], bool(netns)), ([*user, *pidns], False)):
            if _probe([unshare, *cand, "--"]):
                prefix, net, pid = (unshare, *cand, "--"), has_net, True
                break
        else:
            if want_netns and _probe([unshare, *user, "--net", "--"]):
                prefix, net = (unshare, *user, "--net", "--"), True
            notes.append("unshare refused a pid namespace (no namespace rights)")
    if not want_netns:
        notes.append("network isolation disabled")
    launcher: tuple[str, ...] = (sys.executable, "-I", "-S", LAUNCHER)
    if native:
        from kgreason.lkg.solvers.binary_cache import compiled_launcher

        exe = compiled_launcher()
        if exe is not None and _probe([str(exe), "--"]):
            launcher = (str(exe),)
        else:
            notes.append("no C compiler or compile failed: python launcher (slower start)")
    return Isolation(prefix, net, pid, abi, root, tuple(notes), launcher)


def python_read_paths() -> list[str]:
    """Where the interpreter running kgreason keeps its stdlib and packages."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    exe = Path(sys.executable)
    paths.add(str(exe.parent))
    paths.add(str(exe.resolve().parent.parent))
    return sorted(p for p in paths if p and p != "/")
