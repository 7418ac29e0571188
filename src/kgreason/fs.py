"""File-system helpers shared by the eval run directory and the KG store builder: one
wording for OS write failures and one pid-naming flock."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

_WHAT = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}


def describe_os_error(e: OSError) -> str:
    """A short reason a user can act on ("disk full"), else the OS's own message."""
    return _WHAT.get(e.errno or 0, e.strerror or str(e))


def try_flock(path: Path) -> tuple[int | None, str]:
    """Open `path` and take an exclusive non-blocking flock: `(fd, "")`, or `(None, pid)`
    naming the holder (as it wrote itself with `write_pid`, "?" if unknown) when another
    process has it. An OSError from opening the file propagates."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
        os.close(fd)
        return None, holder
    return fd, ""


def write_pid(fd: int) -> None:
    """Replace the lock file's content with this process's pid, for a refused writer to name."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
