"""Attacks on /v1/runs first: a client-chosen run name or folder must never read outside
--runs-dir (dot-dot, absolute paths, encoded separators, NUL, symlinks out of the root)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgreason.server.runs import RunsError, confined, list_runs, read_run, subdir


def make_run(d: Path, n: int = 2) -> Path:
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"method": "llm-free", "dataset": "metaqa"}))
    rows = [{"id": f"q{i}", "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
             "phase": None, "strict_hit1": i % 2 == 0} for i in range(n)]  # fmt: skip
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "timings.jsonl").write_text(
        "".join(json.dumps({"id": r["id"], "wall_s": 0.1}) + "\n" for r in rows)
    )
    return d


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "runs"
    make_run(root / "good")
    make_run(root / "sub" / "inner")
    secret = make_run(tmp_path / "secret")  # a run outside the root
    (root / "escape").symlink_to(secret, target_is_directory=True)
    return root, secret


@pytest.mark.parametrize(
    "name",
    ["..", "../secret", "../../etc/passwd", "/etc", "%2e%2e", "..%2fsecret", "good/../../secret",
     "a\x00b", ".hidden", "sub/..", "sub/../../secret", "~", "escape"],
)  # fmt: skip
def test_read_run_refuses_traversal(tree, name: str) -> None:
    root, _ = tree
    with pytest.raises(RunsError) as e:
        read_run(root, name)
    assert e.value.status in (400, 404)


@pytest.mark.parametrize("rel", ["..", "../", "/tmp", "sub/../..", "escape", "%2e%2e/x"])
def test_list_refuses_folders_outside(tree, rel: str) -> None:
    root, _ = tree
    with pytest.raises(RunsError):
        list_runs(root, rel)


def test_symlink_out_of_root_is_neither_listed_nor_read(tree) -> None:
    root, _ = tree
    assert [r["name"] for r in list_runs(root)] == ["good"]
    assert [r["name"] for r in list_runs(root, "sub")] == ["sub/inner"]
    with pytest.raises(RunsError):
        confined(root, "escape")


def test_a_real_run_reads_with_its_report(tree) -> None:
    root, _ = tree
    out = read_run(root, "good", limit=1)
    assert out["metrics"]["questions"] == 2 and out["total_rows"] == 2
    assert len(out["rows"]) == 1 and out["next_offset"] == 1
    assert "# kgreason evaluation report" in out["report_markdown"]
    assert read_run(root, "sub/inner")["config"]["dataset"] == "metaqa"
    with pytest.raises(RunsError) as e:
        read_run(root, "missing")
    assert e.value.status == 404
    with pytest.raises(RunsError) as e:
        subdir(root, "nope")
    assert e.value.status == 404


def test_reading_never_writes(tree) -> None:
    root, _ = tree
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
    list_runs(root)
    read_run(root, "good")
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*")} == before
