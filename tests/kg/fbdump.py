"""The synthetic Freebase dump of bench/freebase_dump.py, for the dump-build tests."""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path
from types import ModuleType

NS = "http://rdf.freebase.com/ns/"


def generator() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "freebase_dump.py"
    spec = importlib.util.spec_from_file_location("freebase_dump", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_dump(path: Path, lines: list[str]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("".join(x + "\n" for x in lines))
    return path


def fact(s: str, p: str, o: str) -> str:
    """One dump line; `o` is written as given (an IRI `<...>` or a literal)."""
    return f"<{NS}{s}>\t<{NS}{p}>\t{o}\t."


def store_files(store: Path) -> dict[str, bytes]:
    """Every file of a store but its manifest (which names the source)."""
    return {p.name: p.read_bytes() for p in sorted(store.iterdir()) if p.name != "manifest.json"}
