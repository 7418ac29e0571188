"""The on-disk layout of an evaluation run, built for kill-at-any-moment safety.

runs/NAME/
  config.json      what was run: settings, method, dataset, prompt hashes, model, KG
                   identity, package version, git revision
  results.jsonl    one line per finished question, appended and flushed as each finishes;
                   rewritten in dataset order when the run completes
  timings.jsonl    wall time per question (kept apart so results.jsonl is reproducible)
  transcript.jsonl every LLM call, replayable with `kgreason eval --replay`
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

RESULTS = "results.jsonl"
TIMINGS = "timings.jsonl"
CONFIG = "config.json"
TRANSCRIPT = "transcript.jsonl"


class RunDirError(ValueError):
    pass


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


def read_jsonl_tolerant(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSONL file written by a process that may have been killed mid-line: a torn
    last line is cut off the file (so appends continue cleanly) and ignored."""
    if not path.is_file():
        return []
    data = path.read_bytes()
    rows: list[dict[str, Any]] = []
    good_end = 0
    pos = 0
    for line in data.split(b"\n"):
        end = pos + len(line) + 1
        if end > len(data):  # no trailing newline: torn line
            break
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                break
        good_end = end
        pos = end
    if good_end < len(data):
        with path.open("r+b") as f:
            f.truncate(good_end)
    return rows


class JsonlAppender:
    """Appends one JSON object per line and flushes, so a killed run loses at most the line
    being written (which `read_jsonl_tolerant` then drops)."""

    def __init__(self, path: Path):
        self.path = path
        self._f = path.open("a", encoding="utf-8")

    def write(self, row: dict[str, Any]) -> None:
        self._f.write(json.dumps(row, ensure_ascii=False, sort_keys=True, default=str) + "\n")
        self._f.flush()

    def close(self) -> None:
        self._f.close()


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    os.replace(tmp, path)


def rewrite_sorted(path: Path, key: str) -> None:
    """Rewrite a JSONL file ordered by `key` (atomically), for a deterministic final file."""
    rows = read_jsonl_tolerant(path)
    rows.sort(key=lambda r: r[key])
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)
