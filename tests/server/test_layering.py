"""Library first: the pipelines never import the server, and the server uses only kgreason's
public API (plus the eval run readers for /v1/runs)."""

from __future__ import annotations

import ast
from pathlib import Path

import kgreason

PKG = Path(kgreason.__file__).parent
#: what server/ may import from kgreason (the public API, tracing, the eval readers)
ALLOWED = ("kgreason", "kgreason.tracing", "kgreason.eval", "kgreason.server")


def imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def test_pipelines_never_import_the_server() -> None:
    for sub in ("pog", "lkg", "kg", "llm", "embed", "eval"):
        for f in (PKG / sub).rglob("*.py"):
            assert not any(m.startswith("kgreason.server") for m in imports(f)), f


def test_server_uses_the_public_api_only() -> None:
    files = [f for f in (PKG / "server").rglob("*.py") if not f.name.startswith("mcp")]
    assert len(files) > 5
    for f in files:
        for m in imports(f):
            if m == "kgreason" or m.startswith("kgreason."):
                assert (
                    m == "kgreason"
                    or m.startswith(tuple(a + "." for a in ALLOWED[1:]))
                    or (m in ALLOWED)
                ), f"{f.name} imports {m}"
