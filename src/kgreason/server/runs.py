"""Read-only access to eval run directories under one root (`kgreason serve --runs-dir`).

Names come from the client, so every path is built from validated parts and then checked
to resolve inside the root: `..`, absolute paths, encoded separators, NUL bytes and
symlinks that leave the root are all refused. The files of a run are the server's to
confine too (the eval readers follow symlinks, as `kgreason report` on one's own directory
should): each is resolved and must stay inside the root, is opened without following a
final symlink and without blocking (a FIFO), must be a regular file, and is read up to a
cap. Rows the figures cannot use are skipped and named, never a 500. Nothing here writes,
so a run being written by `kgreason eval` meanwhile is read as it stands."""

from __future__ import annotations

import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgreason.eval import report, rundir, summarize

log = logging.getLogger(__name__)

#: one path component: no separators, no leading dot (so no "." / ".." / hidden files)
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
#: the config keys the listing shows
SUMMARY_KEYS = ("method", "dataset", "split", "hops", "model", "created")
#: read-only, no controlling tty, and neither a final symlink (one swapped in after the
#: check is refused) nor a wait for a FIFO's writer
OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC
#: how many skipped lines a response names (all are counted)
MAX_NAMED = 50


@dataclass(frozen=True)
class Caps:
    """Largest run files served, in bytes. A config is a few KB; a results row is ~1 KB
    (IO baseline) to ~5 KB (PoG, with paths and usage), so 64 MiB holds >10,000 PoG
    questions; a timing row is ~150-400 bytes. Parsed rows take several times their size
    in memory, which the caps bound per request."""

    config: int = 1 << 20
    results: int = 64 << 20
    timings: int = 16 << 20


CAPS = Caps()


class RunsError(ValueError):
    def __init__(self, kind: str, message: str, status: int):
        super().__init__(message)
        self.kind, self.status = kind, status


def confined(root: Path, *parts: str) -> Path:
    """root/parts..., refused unless every part is a plain name and the result (symlinks
    resolved) stays inside root."""
    for p in parts:
        if not NAME.fullmatch(p):
            raise RunsError("bad-request", f"not a run or directory name: {p!r}", 400)
    base = root.resolve()
    try:
        path = base.joinpath(*parts).resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        raise RunsError("not-found", f"{'/'.join(parts)!r} cannot be resolved", 404) from None
    if path != base and not path.is_relative_to(base):
        raise RunsError("bad-request", f"{'/'.join(parts)!r} leaves the runs directory", 400)
    return path


def subdir(root: Path, rel: str | None) -> Path:
    """The `?dir=` of /v1/runs: a relative folder inside root (default root itself)."""
    if (rel or "").startswith(("/", "\\")):
        raise RunsError("bad-request", f"{rel!r}: give a folder inside the runs directory", 400)
    parts = [p for p in (rel or "").split("/") if p]
    path = confined(root, *parts)
    if not path.is_dir():
        raise RunsError("not-found", f"no directory {rel!r} in the runs directory", 404)
    return path


def _refused(label: str, why: str) -> RunsError:
    return RunsError("unreadable-run", f"{label}: {why}", 422)


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "a device")


def _open(top: Path, path: Path, label: str) -> tuple[int, os.stat_result]:
    """An fd on `path` (and its fstat), refused with a RunsError naming `label` unless it
    is a regular file inside `top`."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        raise _refused(label, "cannot be resolved (a symlink loop)") from None
    if not real.is_relative_to(top):
        raise _refused(label, "leaves the runs directory (a symlink out of it)")
    try:
        fd = os.open(real, OPEN_FLAGS)
    except OSError as e:
        raise _refused(label, f"cannot be opened ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refused(label, f"not a regular file ({_kind(st.st_mode)})")
        try:  # what was opened, in case a directory on the way was swapped meanwhile
            opened = Path(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            opened = real  # no /proc: the checks above stand
        if not opened.is_relative_to(top):
            raise _refused(label, "leaves the runs directory (changed while opening)")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _over(label: str, cap: int) -> RunsError:
    return _refused(label, f"larger than the {cap / (1 << 20):g} MiB cap for this file")


def _read(top: Path, path: Path, label: str, cap: int) -> bytes | None:
    """The bytes of a run file (None if there is none), at most `cap` of them."""
    if not os.path.lexists(path):
        return None
    fd, st = _open(top, path, label)
    with os.fdopen(fd, "rb") as f:
        if st.st_size > cap:
            raise _over(label, cap)
        try:
            data = f.read(cap + 1)  # the file may have grown since the fstat
        except OSError as e:
            raise _refused(label, f"cannot be read ({e.strerror})") from None
    if len(data) > cap:
        raise _over(label, cap)
    return data


def _count_lines(top: Path, path: Path, label: str, cap: int) -> tuple[int, float]:
    """(newlines in the file, its mtime), reading at most `cap` bytes."""
    fd, st = _open(top, path, label)
    n = seen = 0
    with os.fdopen(fd, "rb") as f:
        if st.st_size > cap:
            raise _over(label, cap)
        try:
            for chunk in iter(lambda: f.read(1 << 16), b""):
                seen += len(chunk)
                if seen > cap:
                    raise _over(label, cap)
                n += chunk.count(b"\n")
        except OSError as e:
            raise _refused(label, f"cannot be read ({e.strerror})") from None
    return n, st.st_mtime


def _lmtime(path: Path) -> float:
    """The mtime of `path` itself (never followed, never opened); 0 if it is gone."""
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


def _config(top: Path, run: Path, name: str, caps: Caps) -> tuple[dict[str, Any], list[str]]:
    """The run's config ({} without one) and, if it could not be used, why."""
    label = f"{name}/{rundir.CONFIG}"
    try:
        data = _read(top, run / rundir.CONFIG, label, caps.config)
        return ({} if data is None else summarize.parse_config(data)), []
    except RunsError as e:
        return {}, [str(e)]
    except ValueError as e:
        return {}, [f"{label}: {e}"]


def list_runs(root: Path, rel: str | None = None, caps: Caps = CAPS) -> list[dict[str, Any]]:
    """Run directories (those with results.jsonl) directly under root/rel, newest first.
    A run whose files are refused is listed with `problems` saying why."""
    base, top = subdir(root, rel), root.resolve()
    try:
        children = list(base.iterdir())
    except OSError as e:
        raise RunsError(
            "unreadable-run", f"{rel or '.'}: cannot be listed ({e.strerror})", 422
        ) from None
    out = []
    for child in children:
        if not NAME.fullmatch(child.name):
            continue
        try:
            if not child.is_dir():
                continue
            real = child.resolve()
        except (OSError, RuntimeError):  # unreadable, or a symlink loop
            continue
        if not real.is_relative_to(top):
            continue  # a symlink out of the root is not listed either
        results = real / rundir.RESULTS
        if not os.path.lexists(results):
            continue
        name = str(child.relative_to(top))
        cfg, problems = _config(top, real, name, caps)
        try:
            questions, modified = _count_lines(top, results, f"{name}/{rundir.RESULTS}", caps.results)  # fmt: skip
        except RunsError as e:
            questions, modified = None, _lmtime(results)
            problems.insert(0, str(e))
        for p in problems:
            log.warning("runs listing: %s", p)
        out.append(
            {
                "name": name,
                "questions": questions,
                "modified": modified,
                **{k: cfg[k] for k in SUMMARY_KEYS if k in cfg},
                "problems": problems,
            }
        )
    return sorted(out, key=lambda r: (-r["modified"], r["name"]))


def _rows(data: bytes | None, label: str, check: rundir.RowCheck) -> rundir.JsonlRead:
    got = rundir.parse_jsonl(data or b"", label, "id", check, max_named=MAX_NAMED)
    if got.bad_count:
        log.warning("%s: %d line(s) skipped, first: %s", label, got.bad_count, got.problems[0])
    return got


def read_run(
    root: Path, name: str, offset: int = 0, limit: int = 100, caps: Caps = CAPS
) -> dict[str, Any]:
    """One run: its config, figures, the Markdown report and a page of its result rows.
    `name` may name a run in a subfolder (`sub/run`), each part checked. Unusable result
    files are a 422; an unusable config or timings file is left out and named in
    `problems`; unusable lines are skipped and named in `skipped_lines`."""
    parts = [p for p in name.split("/") if p]
    path, top = confined(root, *parts or [""]), root.resolve()
    label = "/".join(parts)
    if not os.path.lexists(path / rundir.RESULTS):
        raise RunsError("not-found", f"no eval run {name!r} in the runs directory", 404)
    data = _read(top, path / rundir.RESULTS, f"{label}/{rundir.RESULTS}", caps.results)
    config, problems = _config(top, path, label, caps)
    try:
        timing_data = _read(top, path / rundir.TIMINGS, f"{label}/{rundir.TIMINGS}", caps.timings)  # fmt: skip
    except RunsError as e:
        timing_data = None
        problems.append(str(e))
    for p in problems:
        log.warning("run %s: %s", label, p)
    res = _rows(data, f"{label}/{rundir.RESULTS}", summarize.result_problem)
    tim = _rows(timing_data, f"{label}/{rundir.TIMINGS}", summarize.timing_problem)
    fig = summarize.run_figures(path.name, config, res.rows, tim.rows)
    return {
        "name": name,
        "config": fig.config,
        "metrics": fig.metrics,
        "by_group": fig.by_group,
        "calls_histogram": {str(k): v for k, v in fig.calls_histogram.items()},
        "error_kinds": fig.error_kinds,
        "phases": fig.phases,
        "report_markdown": report.markdown([fig]),
        "rows": fig.rows[offset : offset + limit],
        "total_rows": len(fig.rows),
        "next_offset": offset + limit if offset + limit < len(fig.rows) else None,
        "problems": problems,
        "skipped_lines": (res.problems + tim.problems)[:MAX_NAMED],
        "skipped_count": res.bad_count + tim.bad_count,
    }
