"""Sandbox launcher: set limits, drop the user, confine the filesystem with Landlock, exec.

Runs as `python -I -S _launch.py [OPTIONS] -- argv...` inside the sandbox's namespaces,
stdlib only and no json/re (their imports cost more than the rest of the start-up):
`-r NAME=SOFT:HARD` an rlimit, `-u UID` drop to that user, `-p N` RLIMIT_NPROC (set after
the drop), `-l` Landlock with `-R PATH`
readable and `-W PATH` writable paths. The engine gets the launcher's own environment. Why a launcher and not Popen's
preexec_fn: solvers are called from threads (asyncio.to_thread, bench workers), and
running Python between fork and exec in a threaded process can deadlock.

Order matters: rlimits, then the user drop, then (after a drop) a new user namespace, then
RLIMIT_NPROC, then no_new_privs and Landlock (which bind every later exec), then fork and
exec. Why the user namespace: RLIMIT_NPROC counts every process of the user, and
`nobody` is shared by every sandbox on the machine (other runs, other programs), so a low
limit made unrelated runs fail with EAGAIN. In a fresh user namespace the count starts
at zero and the limit applies to this sandbox alone. The namespace gets no uid map and the
engine, not uid 0 there, keeps no capabilities after exec. Any
failure prints one line starting with "kgr-sandbox:" and exits 125, so the host can tell a
sandbox failure from an engine's own error.

The launcher stays as the parent (in a PID namespace it is init): the engine must not be
PID 1, because init ignores signals it has no handler for (an engine's abort() would look
like a clean exit). When the engine dies by a signal the launcher prints
"kgr-sandbox-signal: N" last on stderr and exits 128+N; when the launcher exits, the kernel
kills everything left in the namespace.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys

EXIT_SANDBOX = 125
SIGNAL_MARK = "kgr-sandbox-signal:"
_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446  # same number on every architecture
_PATH_BENEATH, _NET_PORT = 1, 2
# filesystem rights by ABI version
_READ = (1 << 0) | (1 << 2) | (1 << 3)  # execute, read_file, read_dir
_FILE_RIGHTS = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14) | (1 << 15)
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}


def fs_rights(abi: int) -> int:
    return _FS_BY_ABI.get(abi, (1 << 16) - 1)


class _Ruleset(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi(libc: ctypes.CDLL) -> int:
    """Landlock ABI version of the running kernel; 0 when unsupported or disabled."""
    r = libc.syscall(ctypes.c_long(_CREATE), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(0, int(r))


def landlock(libc: ctypes.CDLL, read: list[str], write: list[str]) -> int:
    """Confine this process and its future children: read/execute only beneath `read`,
    full access only beneath `write`; no TCP (ABI >= 4); no signals or abstract sockets
    to processes outside the sandbox (ABI >= 6). Returns the ABI used."""
    abi = landlock_abi(libc)
    if abi < 1:
        raise OSError("Landlock is not supported by this kernel")
    handled = fs_rights(abi)
    attr = _Ruleset(handled, 0, 0)
    size = 8
    if abi >= 4:
        attr.net, size = (1 << 0) | (1 << 1), 16  # bind_tcp, connect_tcp: no rules = denied
    if abi >= 6:
        attr.scoped, size = (1 << 0) | (1 << 1), 24  # abstract unix sockets, signals
    fd = libc.syscall(ctypes.c_long(_CREATE), ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    for paths, rights in ((read, _READ), (write, handled)):
        for p in paths:
            try:
                pfd = os.open(p, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # an absent optional path (e.g. /lib32)
            try:
                allowed = rights & handled
                if not os.path.isdir(p):
                    allowed &= _FILE_RIGHTS
                rule = _PathBeneath(allowed, pfd)
                r = libc.syscall(ctypes.c_long(_ADD_RULE), fd, _PATH_BENEATH, ctypes.byref(rule), 0)
                if r < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {p} failed")
            finally:
                os.close(pfd)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(no_new_privs) failed")
    if libc.syscall(ctypes.c_long(_RESTRICT), fd, 0) < 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    os.close(fd)
    return abi


def options(argv: list[str]) -> tuple[dict[str, object], list[str]]:
    """(options, command) from `[OPTIONS] -- command...`."""
    opts: dict[str, object] = {"rlimits": [], "read": [], "write": []}
    i = 0
    while i < len(argv) and argv[i] != "--":
        flag = argv[i]
        if flag == "-l":
            opts["landlock"] = True
            i += 1
            continue
        value = argv[i + 1]
        if flag == "-r":
            name, limits = value.split("=", 1)
            soft, _, hard = limits.partition(":")
            opts["rlimits"].append((name, int(soft), int(hard or soft)))  # type: ignore[attr-defined]
        elif flag == "-u":
            opts["uid"] = int(value)
        elif flag == "-p":
            opts["nproc"] = int(value)
        elif flag in ("-R", "-W"):
            opts["read" if flag == "-R" else "write"].append(value)  # type: ignore[attr-defined]
        else:
            raise ValueError(f"unknown launcher option {flag}")
        i += 2
    return opts, argv[i + 1 :]


def main(argv: list[str]) -> int:
    try:
        opts, cmd = options(argv[1:])
        if not cmd:
            raise ValueError("no command")
        for name, soft, hard in opts["rlimits"]:  # type: ignore[attr-defined]
            resource.setrlimit(getattr(resource, name), (soft, hard))
        uid = opts.get("uid")
        libc = ctypes.CDLL(None, use_errno=True)
        if isinstance(uid, int):
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER: a private process count
                opts["nproc"] = None  # shared count: leave the limit (docs/security.md)
        if opts.get("nproc"):
            n = int(opts["nproc"])  # type: ignore[call-overload]
            resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
        if opts.get("landlock"):
            landlock(libc, opts["read"], opts["write"])  # type: ignore[arg-type]
        elif libc.prctl(38, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(no_new_privs) failed")
        env = dict(os.environ)
        pid = os.fork()
    except (OSError, ValueError, KeyError, IndexError, AttributeError) as exc:
        sys.stderr.write(f"kgr-sandbox: {type(exc).__name__}: {exc}\n")
        return EXIT_SANDBOX
    if pid == 0:
        try:
            os.execve(cmd[0], cmd, env)
        except OSError as exc:
            os.write(2, f"kgr-sandbox: {type(exc).__name__}: {exc}\n".encode())
        os._exit(EXIT_SANDBOX)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        os.write(2, f"\n{SIGNAL_MARK} {sig}\n".encode())
        return 128 + sig
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
