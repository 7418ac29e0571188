"""A real full disk and a real read-only file system: a tiny tmpfs in a private mount
namespace (root only; elsewhere these skip, and the monkeypatched tests in test_io_rundir.py
and test_io_store.py cover the same paths)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="needs root and unshare(1) to mount a private tmpfs",
)

CHILD = textwrap.dedent(r"""
    import asyncio, json, subprocess, sys
    from pathlib import Path
    from kgreason.eval import rundir
    from kgreason.eval.methods import BASELINES
    from kgreason.eval.records import Answer, Record
    from kgreason.eval.runner import run
    from kgreason.llm.testing import ScriptedLLM

    mnt, work = Path(sys.argv[1]), Path(sys.argv[2])
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    out = {}

    def mount(size, ro=False):
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], check=True)

    def cli(*args):
        r = subprocess.run([sys.executable, "-m", "kgreason", *args], capture_output=True, text=True)
        return {"rc": r.returncode, "stderr": r.stderr.strip().splitlines()}

    recs = [Record(id=f"q{i}", dataset="toy", task="kgqa", question=f"country {i}? " + "x" * 3000,
                   answers=[Answer("A")]) for i in range(100)]
    llm = ScriptedLLM({"io": lambda m: "So the answer is {A}."})

    # 1. a full disk in the middle of an eval run
    mount("64k")
    try:
        asyncio.run(run(recs, BASELINES["io"](), llm, mnt / "run", config={"method": "io"}))
        out["full"] = "no error"
    except rundir.RunDirError as e:
        out["full"] = str(e)
    out["full_files"] = sorted(p.name for p in (mnt / "run").iterdir())
    got = rundir.read_jsonl(mnt / "run" / rundir.RESULTS)
    out["full_rows"], out["full_bad"] = len(got.rows), len(got.bad_lines)
    subprocess.run(["umount", str(mnt)], check=True)

    # 2. a read-only run dir: resume refused in one line, report reads it without writing
    mount("4m")
    asyncio.run(run(recs[:3], BASELINES["io"](), llm, mnt / "run", config={"method": "io"}))
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
    try:
        asyncio.run(run(recs[:4], BASELINES["io"](), llm, mnt / "run", config={"method": "io"},
                        resume=True))
        out["ro"] = "no error"
    except rundir.RunDirError as e:
        out["ro"] = str(e)
    out["ro_report_elsewhere"] = cli("report", str(mnt / "run"), "--out", str(work / "rep"))
    out["ro_report_inplace"] = cli("report", str(mnt / "run"))
    subprocess.run(["umount", str(mnt)], check=True)

    # 3. a full disk during `kg build`
    mount("64k")
    out["store"] = cli("kg", "build", str(work / "kb.tsv"), "--out", str(mnt / "st"))
    out["store_files"] = sorted(p.name for p in mnt.iterdir())
    subprocess.run(["umount", str(mnt)], check=True)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("realfs")
    mnt = work / "mnt"
    mnt.mkdir()
    (work / "kb.tsv").write_text("".join(f"e{i}\trel{i % 7}\te{i + 1}\n" for i in range(20_000)))
    (work / "child.py").write_text(CHILD)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_"))}
    env["PYTHONPATH"] = str(REPO / "src")
    r = subprocess.run(
        ["unshare", "-m", "--propagation", "private", sys.executable, str(work / "child.py"),
         str(mnt), str(work)],
        capture_output=True, text=True, timeout=600, env=env, cwd=work,
    )  # fmt: skip
    if r.returncode != 0 and "unshare failed" in r.stderr:
        pytest.skip(f"cannot create a mount namespace here: {r.stderr.strip()[:200]}")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_full_disk_mid_run(result):
    assert result["full"].startswith("cannot write ") and result["full"].endswith(": disk full")
    assert not [f for f in result["full_files"] if f.endswith(".tmp")]
    assert result["full_rows"] >= 1 and result["full_bad"] == 0  # finished rows are intact


def test_read_only_run_dir(result):
    assert result["ro"].endswith(".lock: read-only file system")
    assert result["ro_report_elsewhere"]["rc"] == 0
    bad = result["ro_report_inplace"]
    assert bad["rc"] == 1 and len(bad["stderr"]) == 1
    assert "report.md: read-only file system" in bad["stderr"][0]


def test_full_disk_store_build(result):
    s = result["store"]
    assert s["rc"] == 1 and len(s["stderr"]) == 1 and "disk full" in s["stderr"][0]
    assert result["store_files"] == []  # no partial store, no temp dir, no lock file
