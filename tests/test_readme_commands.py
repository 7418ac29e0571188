"""The README's two commands (issue 34): the first installs the light runtime only and
answers; the second installs the test tools and runs the tests, and is what `.ci/run` runs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.match(r"# kgreason\n\n```bash\n(.*?)\n```\n", text, re.S)
    assert m, "README must start with its title and one bash block"
    return m.group(1).splitlines()


def test_exactly_two_commands():
    assert len(readme_commands()) == 2


def test_the_first_installs_the_runtime_only_and_asks():
    first = readme_commands()[0]
    assert "pip install -e . " in first and "[" not in first.split("kgreason ask")[0]
    assert "kgreason ask" in first


def test_the_second_installs_the_test_tools_and_is_what_ci_runs():
    second = readme_commands()[1]
    assert "'.[dev]'" in second and "pytest -q" in second
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert second in ci.splitlines()


def test_the_runtime_leaves_out_the_heavy_optional_parts():
    """llvmlite (numba) ~170 MB, torch ~750 MB, playwright ~165 MB: extras, not runtime."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=\[ ]", d, maxsplit=1)[0].lower() for d in deps}
    assert not names & {"numba", "llvmlite", "torch", "playwright", "mypy", "pytest"}
