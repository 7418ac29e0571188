"""Prompt templates of the SymbolLKG stages (paper Appendix A).

Filled by the shared strict loader `kgreason.prompts.load_prompt`: a missing field raises
(literal dollars, e.g. the Horn examples' `$$x`, are doubled in the files).
"""

from __future__ import annotations

from kgreason.prompts import load_prompt as _load


def load_prompt(name: str, **values: str) -> str:
    """SymbolLKG template `name` with every `$key` filled (a missing one raises)."""
    return _load("kgreason.lkg", name, **values)
