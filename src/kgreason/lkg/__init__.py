"""SymbolLKG: logical knowledge graph, hybrid retrieval, logic router and solver programs
with self-repair. Exports resolve lazily so importing `kgreason.lkg.solvers` (or any
submodule) does not pull in the whole pipeline."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "SymbolLKG": "kgreason.lkg.pipeline",
    "SolveResult": "kgreason.lkg.pipeline",
    "LKGNeedsLLM": "kgreason.lkg.pipeline",
    "LKGStore": "kgreason.lkg.storage",
    "LKGBuilder": "kgreason.lkg.construction",
    "HybridRetriever": "kgreason.lkg.retrieval",
    "RetrievedSubgraph": "kgreason.lkg.retrieval",
    "Premise": "kgreason.lkg.retrieval",
    "QAResult": "kgreason.lkg.qa",
    "LKGIndex": "kgreason.lkg.index",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'kgreason.lkg' has no attribute {name!r}")
