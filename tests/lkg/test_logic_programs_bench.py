"""Smoke test of bench/logic_programs.py on a few programs per file (figures not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgreason.lkg.solvers import available

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(available()["z3"].startswith("missing"), reason="z3 missing")
def test_bench_runs_on_a_limit(shared_data: Path, tmp_path: Path):
    out = tmp_path / "summary.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench/logic_programs.py"), "--data",
         str(shared_data / "logic"), "--dataset", "LogicalDeduction", "--dataset", "AR-LSAT",
         "--limit", "4", "--workers", "2", "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "exe_acc" in proc.stdout and "GPT-4 ref" in proc.stdout
    rows = json.loads(out.read_text())
    assert {(r["dataset"], r["model"]) for r in rows} == {
        (d, m) for d in ("LogicalDeduction", "AR-LSAT")
        for m in ("gpt-3.5-turbo", "text-davinci-003")
    }  # fmt: skip
    assert "acc(none)" in proc.stdout and "acc(random)" in proc.stdout
    for r in rows:
        assert r["n"] == 4 and 0 <= r["executed"] <= 4
        # both backup settings from the same rows: the random backup only adds hits
        assert 0 <= r["acc_none"] <= r["acc_random"] <= 100
        assert r["acc_none"] == 100 * r["exe_correct"] / r["n"]
        assert r["n"] - r["executed"] == sum(c for _, c in r["failure_kinds"])
        assert r["dataset"] in proc.stdout
