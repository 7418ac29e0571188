"""The on-disk layout of an evaluation run, built for kill-at-any-moment safety.

runs/NAME/
  config.json      what was run: settings, method, dataset, prompt hashes, model, KG
                   identity, package version, git revision
  results.jsonl    one line per finished question, appended and flushed as each finishes;
                   rewritten in dataset order (one row per question id) when the run completes
  timings.jsonl    wall time per question (kept apart so results.jsonl is reproducible)
  transcript.jsonl every LLM call, replayable with `kgreason eval --replay`
  .lock            held (flock) by the one process writing the run; the kernel drops it
                   when that process dies, so a killed run never leaves a stale lock

Readers never write: `read_jsonl` is pure. Only the lock holder cuts a torn final line
(`cut_torn_tail`) before appending. A bad line in the middle is skipped and reported by
file:line, never treated as the end of the file.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgreason.fs import describe_os_error, try_flock, write_pid

log = logging.getLogger(__name__)

RESULTS = "results.jsonl"
TIMINGS = "timings.jsonl"
CONFIG = "config.json"
TRANSCRIPT = "transcript.jsonl"
LOCK = ".lock"


class RunDirError(ValueError):
    pass


class RunDirBusy(RunDirError):
    """Another live process holds the run directory's lock."""


def io_error(path: Path, e: OSError) -> RunDirError:
    """One line for an OS failure on a run file: names the file and says what happened."""
    return RunDirError(f"cannot write {path}: {describe_os_error(e)}")


def git_revision(start: Path | None = None) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=start or Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


#: why a row is unusable (None: it is fine); a reader's `check` hook
RowCheck = Callable[[dict[str, Any]], str | None]


@dataclass
class JsonlRead:
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: "file:line" of each unreadable line that was skipped (not the torn final line)
    bad_lines: list[str] = field(default_factory=list)
    #: "file:line: why" of the same lines
    problems: list[str] = field(default_factory=list)
    #: how many lines were skipped (the lists above may stop at `max_named`)
    bad_count: int = 0
    #: rows dropped because an earlier row had the same key
    duplicates: int = 0
    #: the raw bytes of those lines, kept so a rewrite can set them aside instead of losing them
    bad_raw: list[bytes] = field(default_factory=list)
    #: True when the last line has no newline (a write cut by a kill); it is ignored
    torn_tail: bool = False


def _load_line(line: bytes) -> tuple[Any, str | None]:
    """(the parsed line, None) or (None, why it is unreadable)."""
    try:
        return json.loads(line), None
    except UnicodeDecodeError:
        return None, "not valid UTF-8"
    except RecursionError:
        return None, "nested too deeply to parse"
    except ValueError as e:  # JSONDecodeError, or an integer over Python's digit limit
        return None, f"not JSON ({str(e)[:80]})"


def parse_jsonl(
    data: bytes,
    where: str,
    key: str | None = "id",
    check: RowCheck | None = None,
    max_named: int | None = None,
) -> JsonlRead:
    """Rows of JSONL bytes read from `where` (the name used in `bad_lines`). A final line
    with no newline is a torn write and is ignored; any other unreadable line, or a row that
    lacks `key` or that `check` refuses, is skipped and named. With `key`, only the first
    row per key is kept. `max_named` bounds the lists of skipped lines (not their count)."""
    res = JsonlRead()
    seen: set[str] = set()
    for n, line in enumerate(io.BytesIO(data), 1):  # lazily: a file of newlines stays small
        if not line.endswith(b"\n"):
            res.torn_tail = True  # only the last line can lack its newline
            break
        if not line.strip():
            continue
        row, why = _load_line(line)
        if why is None and not isinstance(row, dict):
            why = "not a JSON object"
        elif why is None and key is not None and key not in row:
            why = f"no {key!r}"
        elif why is None and check is not None:
            why = check(row)
        if why is None and key is not None:
            try:
                k = json.dumps(row[key], sort_keys=True)
            except (RecursionError, ValueError):
                why = f"{key!r} cannot be compared"
            else:
                if k in seen:
                    res.duplicates += 1
                    continue
                seen.add(k)
        if why is not None:
            res.bad_count += 1
            if max_named is None or len(res.bad_lines) < max_named:
                res.bad_lines.append(f"{where}:{n}")
                res.problems.append(f"{where}:{n}: {why}")
                res.bad_raw.append(line.rstrip(b"\n"))
            continue
        res.rows.append(row)
    return res


def read_jsonl(path: Path, key: str | None = "id", check: RowCheck | None = None) -> JsonlRead:
    """Rows of a JSONL file (see `parse_jsonl`), without ever writing to it."""
    if not path.is_file():
        return JsonlRead()
    return parse_jsonl(path.read_bytes(), str(path), key, check)


def read_jsonl_tolerant(
    path: Path, key: str | None = "id", check: RowCheck | None = None
) -> list[dict[str, Any]]:
    """The readable rows of `path` (see `read_jsonl`), logging any skipped line."""
    got = read_jsonl(path, key, check)
    for problem in got.problems:
        log.warning("%s (line skipped)", problem)
    return got.rows


def cut_torn_tail(path: Path) -> bool:
    """Cut an incomplete final line (no newline) so appends start on a fresh line. Only the
    holder of the run's lock may call this. Returns True if something was cut."""
    if not path.is_file():
        return False
    with path.open("r+b") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return False
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return False
        # scan back for the last newline (lines are far shorter than the whole file)
        end = size
        while end > 0:
            start = max(0, end - (1 << 16))
            f.seek(start)
            chunk = f.read(end - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                f.truncate(start + i + 1)
                return True
            end = start
        f.truncate(0)
        return True


class RunLock:
    """An exclusive, non-blocking flock on `DIR/.lock`; the holder's pid is written in it
    so a refused writer can name it. The kernel releases it when the holder dies."""

    def __init__(self, directory: Path):
        self.path = directory / LOCK
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        try:
            fd, holder = try_flock(self.path)
        except OSError as e:
            raise io_error(self.path, e) from None
        if fd is None:
            raise RunDirBusy(
                f"another kgreason eval holds this run dir {self.path.parent} (pid {holder})"
            )
        try:
            write_pid(fd)
        except OSError as e:
            os.close(fd)
            raise io_error(self.path, e) from None
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock; the file stays (unlinking races)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _dump(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True, default=str) + "\n"


class JsonlAppender:
    """Appends one JSON object per line and flushes, so a killed run loses at most the line
    being written (which `read_jsonl` then ignores and `cut_torn_tail` removes)."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self._f = path.open("a", encoding="utf-8")
        except OSError as e:
            raise io_error(path, e) from None

    def write(self, row: dict[str, Any]) -> None:
        try:
            self._f.write(_dump(row))
            self._f.flush()
        except OSError as e:
            raise io_error(self.path, e) from None

    def close(self) -> None:
        # a full disk can fail the final flush too; the file is closed either way
        with contextlib.suppress(OSError):
            self._f.close()


def write_atomic(path: Path, text: str) -> None:
    """Write `path` via a sibling temp file and a rename; on any failure the temp file is
    removed and `path` is untouched."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise io_error(path, e) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_json_atomic(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str))


def write_rows_atomic(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    write_atomic(path, "".join(_dump(r) for r in rows))


def rewrite_sorted(path: Path, key: str, unique: str = "id") -> None:
    """Rewrite a JSONL file ordered by `key`, one row per `unique` value (atomically), for a
    deterministic final file. Unreadable lines are dropped here, so only the lock holder
    (the runner, at the end of a run) calls this; they are appended to `FILE.bad` first."""
    got = read_jsonl(path, unique)
    if got.bad_raw:
        bad = path.with_name(path.name + ".bad")
        try:
            with bad.open("ab") as f:
                f.write(b"".join(line + b"\n" for line in got.bad_raw))
        except OSError as e:
            raise io_error(bad, e) from None
        for where in got.bad_lines:
            log.warning("%s: unreadable line moved to %s", where, bad)
    got.rows.sort(key=lambda r: r[key])
    write_rows_atomic(path, got.rows)
