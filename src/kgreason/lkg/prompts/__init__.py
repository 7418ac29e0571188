"""Prompt templates of the SymbolLKG stages (paper Appendix A), read with `load_prompt`."""

from __future__ import annotations

from importlib import resources
from string import Template


def load_prompt(name: str, **values: str) -> str:
    """The template `<name>.txt` with `$key` placeholders filled (others left as they are)."""
    text = resources.files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    return Template(text).safe_substitute(values)
