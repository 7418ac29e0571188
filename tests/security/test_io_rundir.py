"""Eval run directories under faults: corrupt lines, duplicates, a second writer, a kill."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kgreason.eval import rundir
from kgreason.eval.methods import BASELINES
from kgreason.eval.records import Answer, Record
from kgreason.eval.report import write_report
from kgreason.eval.runner import run
from kgreason.llm.testing import ScriptedLLM

REPO = Path(__file__).resolve().parents[2]


def records(n: int) -> list[Record]:
    return [
        Record(
            id=f"q{i}",
            dataset="toy",
            task="kgqa",
            question=f"capital of country {i}?",
            answers=[Answer(f"City{i}")],
        )
        for i in range(n)
    ]


def reply(messages) -> str:
    i = int(messages[-1]["content"].rsplit("country ", 1)[1].split("?")[0])
    return f"So the answer is {{City{i}}}."


async def make_run(out: Path, n: int) -> ScriptedLLM:
    llm = ScriptedLLM({"io": reply})
    await run(records(n), BASELINES["io"](), llm, out, config={"method": "io"})
    return llm


async def test_report_never_rewrites_results_with_a_corrupt_line(tmp_path: Path):
    """Regression: `report` rewrote results.jsonl from 200 rows to 2 when line 3 was bad."""
    out = tmp_path / "r"
    await make_run(out, 200)
    lines = (out / rundir.RESULTS).read_bytes().split(b"\n")
    lines[2] = b'{"id": "q2", "broken'
    (out / rundir.RESULTS).write_bytes(b"\n".join(lines))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    md, _ = write_report([out], tmp_path / "rep")
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert after == before  # nothing in the run dir was touched
    assert "| questions | 199 |" in md.read_text()


def test_bad_middle_line_is_skipped_and_named_not_a_truncation_point(tmp_path: Path):
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'{"id": 1}\n{"id": 2}\nnot json\n{"id": 3}\n[1]\n{"id": 4}\n{"id": 5, "to')
    got = rundir.read_jsonl(p)
    assert [r["id"] for r in got.rows] == [1, 2, 3, 4]
    assert got.bad_lines == [f"{p}:3", f"{p}:5"]
    assert got.torn_tail
    assert p.read_bytes().endswith(b'"to')  # reading never writes


def test_rows_are_deduplicated_by_id(tmp_path: Path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"id": "a", "v": 1}\n{"id": "b", "v": 2}\n{"id": "a", "v": 3}\n')
    got = rundir.read_jsonl(p)
    assert [(r["id"], r["v"]) for r in got.rows] == [("a", 1), ("b", 2)]
    assert got.duplicates == 1


async def test_resume_recomputes_a_corrupt_middle_row_and_sets_it_aside(tmp_path: Path):
    out = tmp_path / "r"
    await make_run(out, 6)
    full = (out / rundir.RESULTS).read_bytes()
    lines = full.split(b"\n")
    lines[2] = b"\x00\x00garbage"
    dup = lines[4]
    torn = lines[5][:10]
    (out / rundir.RESULTS).write_bytes(b"\n".join([*lines[:5], dup, torn]))
    llm = ScriptedLLM({"io": reply})
    s = await run(records(6), BASELINES["io"](), llm, out, config={"method": "io"}, resume=True)
    assert (s.done_before, s.computed) == (4, 2)  # q2 (corrupt) and q5 (torn) only
    assert (out / rundir.RESULTS).read_bytes() == full  # one row per id, in order
    assert (out / (rundir.RESULTS + ".bad")).read_bytes() == b"\x00\x00garbage\n"


async def test_second_writer_is_refused_naming_the_holder(tmp_path: Path):
    out = tmp_path / "r"
    await make_run(out, 2)
    with (
        rundir.RunLock(out),
        pytest.raises(rundir.RunDirBusy, match=rf"another kgreason eval .* \(pid {os.getpid()}\)"),
    ):
        await run(records(2), BASELINES["io"](), ScriptedLLM({"io": reply}), out,
                  config={"method": "io"}, resume=True)  # fmt: skip
    # released: the lock file is left behind but no longer held
    await run(records(3), BASELINES["io"](), ScriptedLLM({"io": reply}), out,
              config={"method": "io"}, resume=True)  # fmt: skip
    assert len(rundir.read_jsonl(out / rundir.RESULTS).rows) == 3


def test_cli_second_resume_is_refused_with_one_line(tmp_path: Path):
    """Two `kgreason eval --resume` on one dir: the second exits 1 with one line."""
    out = tmp_path / "run"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            from pathlib import Path
            from kgreason.eval.rundir import RunLock
            with RunLock(Path({str(out)!r})):
                print("held", flush=True)
                sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_env(),
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        r = subprocess.run(
            [sys.executable, "-m", "kgreason", "eval", "metaqa", "--method", "llm-free",
             "--limit", "2", "--out", str(out), "--resume"],
            capture_output=True, text=True, env=_env(), timeout=600,
        )  # fmt: skip
    finally:
        holder.communicate(b"", timeout=60)
    assert r.returncode == 1
    assert f"another kgreason eval holds this run dir {out} (pid {holder.pid})" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (out / rundir.RESULTS).exists()


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO)])
    env["KGREASON_EMBED__BACKEND"] = "static"
    return env


class _FullDisk:
    """A file object whose writes fail with ENOSPC after `ok` successful writes."""

    def __init__(self, f, ok: int):
        self._f, self._ok = f, ok

    def write(self, s):
        if self._ok <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        self._ok -= 1
        return self._f.write(s)

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self._f.close()


async def test_full_disk_mid_run_is_one_line_and_keeps_finished_rows(tmp_path, monkeypatch):
    out = tmp_path / "r"
    real_open = Path.open

    def full_open(self, mode="r", *a, **kw):
        f = real_open(self, mode, *a, **kw)
        if self.name == rundir.RESULTS and "a" in mode:
            return _FullDisk(f, 3)
        return f

    monkeypatch.setattr(Path, "open", full_open)
    with pytest.raises(rundir.RunDirError, match=r"cannot write .*results.jsonl: disk full"):
        await make_run(out, 8)
    monkeypatch.undo()
    assert [r["id"] for r in rundir.read_jsonl(out / rundir.RESULTS).rows] == ["q0", "q1", "q2"]
    assert sorted(p.name for p in out.iterdir()) == [
        ".lock", "config.json", "results.jsonl", "timings.jsonl"
    ]  # fmt: skip


async def test_full_disk_in_final_rewrite_leaves_no_tmp_file(tmp_path, monkeypatch):
    out = tmp_path / "r"
    real_open = Path.open

    def full_open(self, mode="r", *a, **kw):
        f = real_open(self, mode, *a, **kw)
        return (
            _FullDisk(f, 0) if self.name.endswith(".tmp") and self.name != "config.json.tmp" else f
        )

    monkeypatch.setattr(Path, "open", full_open)
    with pytest.raises(rundir.RunDirError, match="disk full"):
        await make_run(out, 3)
    monkeypatch.undo()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    assert len(rundir.read_jsonl(out / rundir.RESULTS).rows) == 3  # appended rows are intact


def test_report_on_unwritable_dir_is_one_line(tmp_path, monkeypatch):
    out = tmp_path / "r"
    out.mkdir()
    (out / rundir.RESULTS).write_text("")
    real_open = Path.open

    def ro_open(self, mode="r", *a, **kw):
        if "w" in mode or "a" in mode:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real_open(self, mode, *a, **kw)

    monkeypatch.setattr(Path, "open", ro_open)
    with pytest.raises(
        rundir.RunDirError, match=r"cannot write .*report.md: read-only file system"
    ):
        write_report([out])
