"""Read-only access to eval run directories under one root (`kgreason serve --runs-dir`).

Names come from the client, so every path is built from validated parts and then checked
to resolve inside the root: `..`, absolute paths, encoded separators, NUL bytes and
symlinks that leave the root are all refused. Nothing here writes (the eval readers are
pure), so a run being written by `kgreason eval` meanwhile is read as it stands."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kgreason.eval import report, rundir, summarize

#: one path component: no separators, no leading dot (so no "." / ".." / hidden files)
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
#: the config keys the listing shows
SUMMARY_KEYS = ("method", "dataset", "split", "hops", "model", "created")


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
    path = base.joinpath(*parts).resolve()
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


def _config(path: Path) -> dict[str, Any]:
    try:
        data = json.loads((path / rundir.CONFIG).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _count_lines(path: Path) -> int:
    try:
        with path.open("rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 16), b""))
    except OSError:
        return 0


def list_runs(root: Path, rel: str | None = None) -> list[dict[str, Any]]:
    """Run directories (those with results.jsonl) directly under root/rel, newest first."""
    base, top = subdir(root, rel), root.resolve()
    out = []
    for child in base.iterdir():
        if not NAME.fullmatch(child.name) or not child.is_dir():
            continue
        real = child.resolve()
        if not real.is_relative_to(top):
            continue  # a symlink out of the root is not listed either
        results = real / rundir.RESULTS
        if not results.is_file():
            continue
        cfg = _config(real)
        out.append(
            {
                "name": str(child.relative_to(top)),
                "questions": _count_lines(results),
                "modified": results.stat().st_mtime,
                **{k: cfg[k] for k in SUMMARY_KEYS if k in cfg},
            }
        )
    return sorted(out, key=lambda r: (-r["modified"], r["name"]))


def read_run(root: Path, name: str, offset: int = 0, limit: int = 100) -> dict[str, Any]:
    """One run: its config, figures, the Markdown report and a page of its result rows.
    `name` may name a run in a subfolder (`sub/run`), each part checked."""
    path = confined(root, *[p for p in name.split("/") if p] or [""])
    if not (path / rundir.RESULTS).is_file():
        raise RunsError("not-found", f"no eval run {name!r} in the runs directory", 404)
    try:
        fig = summarize.load_run(path)
    except (OSError, ValueError) as e:
        raise RunsError("unreadable-run", f"{name}: {e}", 422) from e
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
    }
