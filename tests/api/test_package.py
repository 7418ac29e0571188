"""`import kgreason` is cheap and typed: the top-level names resolve lazily (PEP 562), so
the import loads none of the pipeline's dependencies, and the package ships py.typed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import kgreason

SRC = Path(kgreason.__file__).resolve().parents[1]
HEAVY = ("numpy", "pydantic", "torch", "sentence_transformers", "httpx", "typer", "rich")


def _modules_after(code: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", f"{code}; import sys, json; print(json.dumps(sorted(sys.modules)))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return json.loads(out)


def test_import_kgreason_loads_nothing_heavy() -> None:
    mods = _modules_after("import kgreason")
    # (kgreason.version: one assignment, below every layer, so clients can name it)
    assert sorted(m for m in mods if m.startswith("kgreason")) == ["kgreason", "kgreason.version"]
    assert not [m for m in mods if m.split(".")[0] in HEAVY]


def test_a_top_level_name_imports_only_its_module() -> None:
    mods = _modules_after("import kgreason; kgreason.KGError")
    assert "kgreason.kg.base" in mods
    assert not [m for m in mods if m.startswith(("kgreason.pog", "kgreason.lkg", "torch"))]


def test_every_export_resolves_and_all_lists_them() -> None:
    assert set(kgreason.__all__) == {"__version__", *kgreason._EXPORTS}
    for name in kgreason._EXPORTS:
        obj = getattr(kgreason, name)
        assert getattr(obj, "__name__", name) == name
    assert {"PoG", "SymbolLKG", "open_kg", "load_settings"} <= set(dir(kgreason))


def test_unknown_attribute_is_an_attribute_error() -> None:
    try:
        kgreason.NoSuchThing  # noqa: B018
    except AttributeError as e:
        assert "NoSuchThing" in str(e)
    else:
        raise AssertionError("kgreason.NoSuchThing resolved")


def test_py_typed_marker_is_in_the_package() -> None:
    assert files("kgreason").joinpath("py.typed").is_file()
