"""docs/fidelity.md names a test for each row; every one it names must exist, so a row's
evidence cannot silently go stale when a test is renamed or removed (issue 35: "no row whose
status the code contradicts"). References look like `tests/x/test_y.py::test_z` (or a
source module, `eval/metrics.py::recall_at_k`, under src/kgreason), `::test_w` continues
the last file named in the same row, and `test_prefix_*` names a family of tests."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "fidelity.md"
REF = re.compile(r"`((?:tests/)?[\w/.-]*\.py)?::(\w+)(\*?)")


def references() -> list[tuple[int, str, str]]:
    """(line, file, name) for every reference in the doc's table rows; a name ending in
    `*` is a prefix."""
    out = []
    for n, line in enumerate(DOC.read_text(encoding="utf-8").splitlines(), 1):
        if not line.startswith("|"):
            continue
        last = None
        for m in REF.finditer(line):
            path, name = m.group(1), m.group(2) + m.group(3)
            if path:
                last = path
            if last is None or "..." in last:
                continue
            out.append((n, last, name))
    return out


def test_the_doc_names_many_tests():
    assert len(references()) > 100


def test_every_named_test_exists():
    missing = []
    for n, path, name in references():
        where = [ROOT / path] if path.startswith("tests/") else [ROOT / "tests" / path]
        where.append(ROOT / "src" / "kgreason" / path)
        text = "\n".join(f.read_text(encoding="utf-8") for f in where if f.is_file())
        word = re.escape(name.rstrip("*")) + ("" if name.endswith("*") else r"\b")
        found = rf"^\s*(async )?def {word}|^\s*class {word}|^{word}\s*[:=]"
        if not re.search(found, text, re.M):
            missing.append(f"docs/fidelity.md:{n}: {path}::{name}")
    assert not missing, "\n".join(missing)
