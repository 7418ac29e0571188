import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.eval.methods import Outcome
from kgreason.eval.records import Answer, Record
from kgreason.eval.runner import run
from kgreason.llm.testing import ScriptedLLM


@dataclass
class PathMethod:
    """A test method that returns a fixed reasoning path, so the report has a graph to draw."""

    name: str = "toy-paths"

    async def answer(self, record, llm):
        await llm.complete([{"role": "user", "content": record.question}], stage="answer")
        if record.id == "q2":
            raise RuntimeError("boom")
        return Outcome(
            answers=["Germany"],
            output_text="answer: {Germany}",
            phase="topic-entity-path",
            paths=[
                [
                    ["m.nij", "location.location.nearby_airports", "m.weeze"],
                    ["m.weeze", "location.location.containedby", "m.de"],
                ]
            ],
            names={"m.nij": "Nijmegen", "m.weeze": "Weeze Airport", "m.de": "Germany"},
            topics=["m.nij"],
        )


def _records():
    return [
        Record(
            id=f"q{i}",
            dataset="toy",
            task="kgqa",
            question=f"q{i}?",
            hops=1 + i % 2,
            answers=[Answer("Germany" if i != 1 else "France")],
        )
        for i in range(3)
    ]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    import asyncio

    out = tmp_path / "toy"
    llm = ScriptedLLM({"answer": lambda m: "ok"})
    asyncio.run(
        run(_records(), PathMethod(), llm, out, config={"method": "toy-paths", "dataset": "toy"})
    )
    return out


def test_report_markdown_and_html(run_dir: Path, tmp_path: Path):
    res = CliRunner().invoke(
        app, ["report", str(run_dir), str(run_dir), "--out", str(tmp_path / "rep")]
    )
    assert res.exit_code == 0, res.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Hits@1 strict (%)" in md and "lenient, paper-compatible (%)" in md
    assert "| Hits@1 strict (%) | 33.33 | 33.33 |" in md
    assert "internal_error: 1" in md
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "<svg" in page and "Weeze Airport" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_report_bad_dir(tmp_path: Path):
    res = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 1
    assert "not a run directory" in res.output


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_html_report_renders_in_headless_chromium(run_dir: Path, tmp_path: Path):
    exe = _chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed in CI")
        pytest.skip("chromium not installed")
    CliRunner().invoke(app, ["report", str(run_dir)])
    page = run_dir / "report.html"
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run(
        [exe, *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "<table>" in dom and "Hits@1 strict" in dom
    assert 'class="paths"' in dom and "Nijmegen" in dom
    shot = tmp_path / "shot.png"
    subprocess.run(
        [exe, *flags, f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
