"""Path pruning (Algorithm 2): the four beam-search strategies, dispatched by
`PoGSettings.strategy`, with the width each step kept recorded for the trace.

    fuzzy       FuzzySelect(W_max)
    precise     FuzzySelect(W1) -> PrecisePathSelect(W_max)
    branch      FuzzySelect(W1) -> BranchReduceSelect(W_max, PrecisePathSelect inside)
    three-step  FuzzySelect(W1) -> BranchReduceSelect(W2) -> PrecisePathSelect(W_max)

FuzzySelect ranks by similarity to the indicator (I_LLM, or I_Sup for supplement paths); the
LLM steps see paths rendered with ids (`{m.x: Name} -> r -> {...}`). With a path ranker in
place of SBERT (`pog.fuzzy_stage` "learned"/"combined", pog/ranker), FuzzySelect scores the
QUESTION instead: the ranker was trained on questions, not on the LLM's indicators.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kgreason.llm.base import ChatLLM
from kgreason.pog.branch import Selector, branch_reduce_select
from kgreason.pog.fuzzy import FuzzySelector
from kgreason.pog.llm_common import QuestionContext
from kgreason.pog.precise import precise_select
from kgreason.pog.render import NameBook, displayed_ids, render_path
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import ReasoningPath


@dataclass
class Pruned:
    paths: list[ReasoningPath]
    #: one entry per step: {"step": name, "in": n, "out": m} (+ branch rounds)
    steps: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Pruner:
    llm: ChatLLM
    fuzzy: FuzzySelector
    book: NameBook
    settings: PoGSettings

    async def render(self, paths: Sequence[ReasoningPath]) -> list[str]:
        await self.book.ensure(displayed_ids(paths))
        return [render_path(p, self.book.names) for p in paths]

    def precise_selector(self, ctx: QuestionContext) -> Selector:
        async def select(paths: Sequence[ReasoningPath], w: int) -> list[ReasoningPath]:
            picked = await precise_select(self.llm, ctx, await self.render(paths), w, self.settings)
            return [paths[i] for i in picked]

        return select

    async def prune(
        self,
        paths: Sequence[ReasoningPath],
        ctx: QuestionContext,
        entity_list: Sequence[str],
        indicator: str | None = None,
    ) -> Pruned:
        s = self.settings
        ind = indicator or ctx.analysis.indicator
        out = Pruned(list(paths))
        if not paths:
            return out
        await self.book.ensure(displayed_ids(paths))
        first_w = s.w_max if s.strategy == "fuzzy" else s.w1
        if getattr(self.fuzzy, "ranker", None) is not None:
            ind = ctx.question
        kept = self.fuzzy.select(ind, paths, self.book.names, first_w)
        out.steps.append({"step": "fuzzy", "in": len(paths), "out": len(kept)})
        select = self.precise_selector(ctx)
        if s.strategy in ("branch", "three-step"):
            w = s.w_max if s.strategy == "branch" else s.w2
            br = await branch_reduce_select(kept, entity_list, w, s.d_max, select)
            out.steps.append(
                {
                    "step": "branch",
                    "in": len(kept),
                    "out": len(br.paths),
                    "width": w,
                    "selector_calls": br.selector_calls,
                    "rounds": br.rounds,
                }
            )
            kept = br.paths
        if s.strategy in ("precise", "three-step"):
            before = len(kept)
            kept = await select(kept, s.w_max)
            out.steps.append({"step": "precise", "in": before, "out": len(kept)})
        out.paths = kept
        return out
