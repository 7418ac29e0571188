"""A toy pruning strategy for the "add a pruning strategy" recipe (CONTRIBUTING.md): keep
the W_max shortest paths (fewest hops; ties keep the candidates' order). No LLM call."""

from __future__ import annotations

from collections.abc import Sequence

from kgreason.pog.pruning import PruneRun
from kgreason.pog.types import ReasoningPath


async def keep_shortest(run: PruneRun, paths: Sequence[ReasoningPath]) -> list[ReasoningPath]:
    kept = sorted(paths, key=lambda p: p.length)[: run.settings.w_max]
    run.record("shortest", len(paths), kept)
    return kept
