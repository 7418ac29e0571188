"""Crash-safe replacement of a store directory, and recovery after a crash.

A build writes `DIR.tmp-xxxx`, then swaps it in with two renames: `DIR -> DIR.old-xxxx`,
`DIR.tmp-xxxx -> DIR`, then deletes the old one. A kill can strand things at each step:

- between the renames: `DIR` is missing and the previous store sits in `DIR.old-*`;
- before or during the build: a half-written `DIR.tmp-*`;
- after the second rename: a complete but unwanted `DIR.old-*`.

`recover` puts this right. It runs under `BuildLock` (a flock on `.DIR.lock` beside the
target, released by the kernel if the holder dies), so it never touches the temp directory
of a build that is still running. `kgreason kg build` holds the lock for the whole build;
opening a store recovers only if no build holds it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from pathlib import Path

from kgreason.fs import describe_os_error, try_flock, write_pid
from kgreason.kg.base import KGError
from kgreason.kg.store.format import MANIFEST

log = logging.getLogger(__name__)


class StoreBusyError(KGError):
    """Another process is building this store directory."""


class StoreWriteError(KGError):
    """The store could not be written (disk full, read-only, permissions)."""


def write_error(out: Path, e: OSError) -> StoreWriteError:
    what = describe_os_error(e)
    if e.errno is None and _nearly_full(out.parent):  # numpy's short write carries no errno
        what = f"disk full ({e})"
    where = f" ({e.filename})" if e.filename else ""
    return StoreWriteError(f"cannot write store {out}: {what}{where}")


def _nearly_full(directory: Path) -> bool:
    try:
        return shutil.disk_usage(directory).free < (1 << 20)
    except OSError:
        return False


def lock_path(out: Path) -> Path:
    return out.with_name(f".{out.name}.lock")


class BuildLock:
    """An exclusive non-blocking flock beside `out`, naming its holder's pid."""

    def __init__(self, out: Path):
        self.out = out
        self.path = lock_path(out)
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        """Lock, or False if another process holds it. The lock file is removed on release
        (so a build leaves nothing behind); a lock won on a file that was meanwhile removed
        is stale, so the inode is checked and the attempt repeated."""
        for _ in range(100):
            try:
                fd, self._holder = try_flock(self.path)
            except OSError as e:
                raise write_error(self.out, e) from None
            if fd is None:
                return False
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # the holder we waited on removed it: lock the new file instead
                os.close(fd)
                continue
            with contextlib.suppress(OSError):
                write_pid(fd)
            self._fd = fd
            return True
        raise StoreBusyError(f"{self.out}: the build lock {self.path} keeps changing")

    def acquire(self) -> BuildLock:
        if not self.try_acquire():
            raise StoreBusyError(
                f"{self.out}: another kgreason kg build is writing this store (pid {self._holder})"
            )
        return self

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)  # while still locked: see try_acquire
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> BuildLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _siblings(out: Path, marker: str) -> list[Path]:
    if not out.parent.is_dir():
        return []
    prefix = f"{out.name}.{marker}-"
    return sorted(
        (p for p in out.parent.iterdir() if p.name.startswith(prefix) and p.is_dir()),
        key=lambda p: p.stat().st_mtime,
    )


def recover(out: Path) -> list[str]:
    """Undo what a killed build left behind; the caller holds the build lock. Returns what
    was done, one phrase per action (also logged)."""
    done: list[str] = []
    for tmp in _siblings(out, "tmp"):
        shutil.rmtree(tmp, ignore_errors=True)
        done.append(f"removed unfinished build {tmp.name}")
    olds = [p for p in _siblings(out, "old") if (p / MANIFEST).is_file()]
    if olds and not (out / MANIFEST).is_file() and not (out.exists() and any(out.iterdir())):
        keep = olds.pop()  # the newest complete store
        if out.exists():
            out.rmdir()
        keep.rename(out)
        done.append(f"restored {out.name} from {keep.name} (a build was killed mid-swap)")
    for old in _siblings(out, "old"):
        shutil.rmtree(old, ignore_errors=True)
        done.append(f"removed replaced store {old.name}")
    for what in done:
        log.warning("%s: %s", out, what)
    return done


def recover_if_idle(out: Path) -> list[str]:
    """`recover` when no build holds the lock (used when opening a store); else nothing.
    Never fails the open: a directory we cannot write to is simply left as it is."""
    if not _siblings(out, "tmp") and not _siblings(out, "old"):
        return []
    lock = BuildLock(out)
    try:
        if not lock.try_acquire():
            return []
    except StoreWriteError:
        return []
    try:
        return recover(out)
    except OSError as e:
        log.warning("%s: could not recover after a killed build: %s", out, e)
        return []
    finally:
        lock.release()
