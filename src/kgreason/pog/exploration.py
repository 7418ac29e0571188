"""Exploration (Algorithm 1): topic-entity paths from D = min(D_predict, D_max) upward, then
LLM-supplement paths, then node expansion over the full KG, then the final answer from the
paths plus the model's own knowledge. After each step: pruning (Algorithm 2), then the
sufficiency check (summary + `{Yes}`/`{No}`); the first `{Yes}` ends exploration with an
answer generated from the paths judged sufficient.

Where Algorithm 1 is terse:
- Paths_T / Paths_S are the pruned paths of every step of their phase (deduplicated), not only
  of the last depth, so a depth with no paths cannot erase what an earlier depth found;
- a step with no candidate paths is recorded and skipped (there is nothing to evaluate);
- node expansion stops early when a round adds no path; with no path at all it is skipped;
- BranchReduceSelect in phases 2-3 uses List_T (supplement entities are not on every path).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kgreason.embed.base import Embedder
from kgreason.kg.base import KnowledgeGraph
from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError
from kgreason.pog import answering
from kgreason.pog.analysis import read_indicator
from kgreason.pog.expand import node_expand
from kgreason.pog.graph import PreparedGraph
from kgreason.pog.llm_common import QuestionContext
from kgreason.pog.paths import path_signature, supplement_paths, topic_entity_paths
from kgreason.pog.pruning import Pruner
from kgreason.pog.render import displayed_ids
from kgreason.pog.settings import PoGSettings
from kgreason.pog.supplement import align_predictions, predict_supplements
from kgreason.pog.types import Phase, ReasoningPath

#: above this many subgraph entities, supplement predictions are aligned through name search
ALIGN_ALL_MAX = 20_000


@dataclass
class ExplorationOutcome:
    """Where exploration stopped: the phase, its paths and the LLM's answers (raw reply kept)."""

    phase: Phase
    paths: list[ReasoningPath]
    answers: list[str]
    raw: str


def _merge(*groups: Sequence[ReasoningPath]) -> list[ReasoningPath]:
    seen: set[Any] = set()
    out: list[ReasoningPath] = []
    for g in groups:
        for p in g:
            sig = path_signature(p)
            if sig not in seen:
                seen.add(sig)
                out.append(p)
    return out


@dataclass
class Explorer:
    kg: KnowledgeGraph
    llm: ChatLLM
    pruner: Pruner
    prepared: PreparedGraph
    settings: PoGSettings
    #: for aligning supplement predictions to subgraph entity names
    embedder: Embedder
    trace: list[dict[str, Any]] = field(default_factory=list)
    bounds_hit: list[str] = field(default_factory=list)
    #: the latest pruned paths, kept as the partial result if the question ends in an error
    latest: list[ReasoningPath] = field(default_factory=list)

    async def _step(
        self,
        phase: Phase,
        candidates: Sequence[ReasoningPath],
        ctx: QuestionContext,
        entity_list: Sequence[str],
        **info: Any,
    ) -> tuple[list[ReasoningPath], ExplorationOutcome | None]:
        """Prune, check sufficiency, answer on {Yes}. Returns (pruned paths, outcome)."""
        t0 = time.perf_counter()
        entry: dict[str, Any] = {"phase": phase, **info, "candidates": len(candidates)}
        self.trace.append(entry)
        if not candidates:
            entry["skipped"] = "no candidate paths"
            return [], None
        pruned = await self.pruner.prune(candidates, ctx, entity_list)
        entry["pruning"] = pruned.steps
        self.latest = pruned.paths
        rendered = await self.pruner.render(pruned.paths)
        entry["paths"] = rendered
        verdict = await answering.evaluate(self.llm, ctx, rendered, self.settings)
        entry["sufficient"] = verdict.sufficient
        if verdict.summary:
            entry["summary"] = verdict.summary
        outcome = None
        if verdict.sufficient:
            names, raw = await answering.generate_answer(
                self.llm, ctx, rendered, verdict.summary, self.settings
            )
            outcome = ExplorationOutcome(phase, pruned.paths, names, raw)
        entry["seconds"] = round(time.perf_counter() - t0, 4)
        return pruned.paths, outcome

    async def run(self, ctx: QuestionContext) -> ExplorationOutcome:
        s = self.settings
        g = self.prepared.graph
        list_t = list(ctx.analysis.ordered_topics)
        # Phase 1: topic entity path exploration
        paths_t: list[ReasoningPath] = []
        for depth in range(min(ctx.analysis.predicted_depth, s.d_max), s.d_max + 1):
            search = topic_entity_paths(
                g,
                list_t,
                depth,
                max_paths=s.max_paths,
                max_level_rows=s.max_level_rows,
                revisit_when_empty=s.revisits(),
            )
            self.bounds_hit += search.bounds_hit()
            kept, out = await self._step(
                "topic-entity-path",
                search.paths,
                ctx,
                list_t,
                depth=depth,
                length=[search.min_len, search.max_len],
            )
            paths_t = _merge(paths_t, kept)
            if out:
                return out
        # Phase 2: LLM supplement path exploration
        paths_s = await self._supplement_candidates(ctx, list_t, paths_t)
        kept, out = await self._step("llm-supplement", paths_s, ctx, list_t)
        paths_s = kept
        if out:
            return out
        # Phase 3: node expand exploration over the full KG
        paths_e = _merge(paths_t, paths_s)
        if paths_e:
            paths_e = (await self.pruner.prune(paths_e, ctx, list_t)).paths
        visited: set[str] = set()
        for depth in range(1, s.d_max + 1):
            if not paths_e:
                self.trace.append({"phase": "node-expand", "depth": depth, "skipped": "no paths"})
                break
            exp = await node_expand(self.kg, paths_e, visited)
            self.bounds_hit += exp.bounds_hit
            visited.update(exp.expanded)
            if not exp.new_paths:
                self.trace.append({"phase": "node-expand", "depth": depth, "skipped": "no new"})
                break
            paths_e, out = await self._step(
                "node-expand", exp.paths, ctx, list_t, depth=depth, expanded=len(exp.expanded)
            )
            if out:
                return out
        # Final: paths plus the model's own knowledge
        paths_l = _merge(paths_t, paths_s, paths_e)
        entry: dict[str, Any] = {"phase": "final-llm-knowledge", "candidates": len(paths_l)}
        self.trace.append(entry)
        if paths_l:
            pruned = await self.pruner.prune(paths_l, ctx, list_t)
            entry["pruning"] = pruned.steps
            paths_l = pruned.paths
            self.latest = paths_l
        rendered = await self.pruner.render(paths_l)
        entry["paths"] = rendered
        names, raw = await answering.final_answer(self.llm, ctx, rendered, s)
        return ExplorationOutcome("final-llm-knowledge", paths_l, names, raw)

    async def _supplement_candidates(
        self, ctx: QuestionContext, list_t: list[str], paths_t: list[ReasoningPath]
    ) -> list[ReasoningPath]:
        s = self.settings
        g = self.prepared.graph
        preds = await predict_supplements(
            self.llm, ctx, await self.pruner.render(paths_t), self.settings
        )
        book = self.pruner.book
        entities = g.entities()
        if len(entities) > ALIGN_ALL_MAX:
            # a hub's neighbourhood: candidates come from the KG's name search instead of
            # fetching and embedding every name of the subgraph (reported in the trace)
            found = [m for p in preds for m in await self.kg.search(p.name, limit=20)]
            entities = {m.id for m in found} & entities
            self.bounds_hit.append(
                f"supplement alignment: {len(g.entities())} subgraph entities > "
                f"{ALIGN_ALL_MAX}, aligned against name-search candidates only"
            )
        await book.ensure(entities)
        names = {e: book.get(e) for e in entities}
        aligned, unmatched = align_predictions(preds, names, self.embedder, set(list_t))
        self.trace.append(
            {
                "phase": "llm-supplement",
                "predictions": [p.name for p in preds],
                "aligned": {a.prediction.name: a.entity_id for a in aligned},
                "unmatched": unmatched,
            }
        )
        out: list[ReasoningPath] = []
        topic_names = [book.get(t) for t in list_t]
        for a in aligned:
            entity_list = [*list_t, a.entity_id]
            try:
                order = read_indicator(a.prediction.indicator, [*topic_names, a.entity_name])
                entity_list = [entity_list[i] for i in order.order]
            except ParseError:
                pass  # an unreadable indicator (topics only, or cut) keeps List_T + e
            search = supplement_paths(
                g,
                entity_list,
                n_topics=len(list_t),
                d_max=s.d_max,
                max_paths=s.max_paths,
                max_level_rows=s.max_level_rows,
                revisit_when_empty=s.revisits(),
            )
            self.bounds_hit += search.bounds_hit()
            await book.ensure(displayed_ids(search.paths))
            out = _merge(
                out,
                self.pruner.fuzzy.select(a.prediction.indicator, search.paths, book.names, s.w_max),
            )
        return out
