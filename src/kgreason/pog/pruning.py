"""Path pruning (Algorithm 2): beam-search strategies looked up by name in a
`PruningStrategies` registry, with the width each step kept recorded for the trace.

    fuzzy-precise  FuzzySelect(W1) -> PrecisePathSelect(W_max)      (the paper's PoG setting)
    fuzzy          FuzzySelect(W_max)
    fuzzy-branch   FuzzySelect(W1) -> BranchReduceSelect(W_max, PrecisePathSelect inside)
    three-step     FuzzySelect(W1) -> BranchReduceSelect(W2) -> PrecisePathSelect(W_max)

The names follow Algorithm 2's cases ("Fuzzy Selection Only", "Fuzzy + Precise Path
Selection", "Fuzzy + Branch Reduced Selection", "3-Step Beam Search"); section 5 runs PoG with
Fuzzy + Precise (W1 = 80), which is therefore the default. The names of earlier releases,
"precise" and "branch", stay as aliases (`PruningStrategies.canonical`).

A strategy is an async function `(run: PruneRun, paths) -> kept paths` composed from the
steps `PruneRun` offers (fuzzy, branch, precise, or its own, recorded with `record`).
`default_strategies()` builds a fresh registry of the four above; a caller adds one with
`register(name, fn)` on its own copy (no import-time registration, no global state) and
passes it to `PoG(..., strategies=...)` and, to validate a custom `pog.strategy`, as
`PoGSettings.model_validate(data, context={"strategies": registry})`.

FuzzySelect ranks by similarity to the indicator (I_LLM, or I_Sup for supplement paths); the
LLM steps see paths rendered with ids (`{m.x: Name} -> r -> {...}`). With a path ranker in
place of SBERT (`pog.fuzzy_stage` "learned"/"combined", pog/ranker), FuzzySelect scores the
QUESTION instead: the ranker was trained on questions, not on the LLM's indicators.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgreason.llm.base import ChatLLM
from kgreason.pog.branch import Selector, branch_reduce_select
from kgreason.pog.fuzzy import FuzzySelector
from kgreason.pog.llm_common import QuestionContext
from kgreason.pog.precise import precise_select
from kgreason.pog.render import NameBook, SetCut, displayed_ids, render_path, shown_count
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import ReasoningPath


@dataclass
class Pruned:
    paths: list[ReasoningPath]
    #: one entry per step: {"step": name, "in": n, "out": m} (+ branch rounds)
    steps: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class PruneRun:
    """One pruning call: the steps a strategy composes, each recording its widths."""

    pruner: Pruner
    ctx: QuestionContext
    entity_list: Sequence[str]
    #: what FuzzySelect ranks against (the indicator, or the question for a ranker)
    indicator: str
    out: Pruned

    @property
    def settings(self) -> PoGSettings:
        return self.pruner.settings

    def record(self, step: str, n_in: int, kept: Sequence[ReasoningPath], **extra: Any) -> None:
        self.out.steps.append({"step": step, "in": n_in, "out": len(kept), **extra})

    def fuzzy(self, paths: Sequence[ReasoningPath], width: int) -> list[ReasoningPath]:
        p = self.pruner
        kept = p.fuzzy.select(self.indicator, paths, p.book.names, width)
        pre = p.fuzzy.prefiltered(len(paths), width)
        self.record("fuzzy", len(paths), kept, **({"prefiltered": pre} if pre else {}))
        return kept

    async def branch(self, paths: Sequence[ReasoningPath], width: int) -> list[ReasoningPath]:
        s = self.settings
        select = self.pruner.precise_selector(self.ctx)
        per_entity = s.branch_selection == "per-entity"
        br = await branch_reduce_select(
            list(paths), self.entity_list, width, s.d_max, select, per_entity=per_entity
        )
        self.record(
            "branch", len(paths), br.paths, width=width, selection=s.branch_selection,
            selector_calls=br.selector_calls, rounds=br.rounds,
        )  # fmt: skip
        return br.paths

    async def precise(self, paths: Sequence[ReasoningPath], width: int) -> list[ReasoningPath]:
        kept = await self.pruner.precise_selector(self.ctx)(paths, width)
        self.record("precise", len(paths), kept)
        return kept


Strategy = Callable[[PruneRun, Sequence[ReasoningPath]], Awaitable[list[ReasoningPath]]]


async def fuzzy_only(run: PruneRun, paths: Sequence[ReasoningPath]) -> list[ReasoningPath]:
    return run.fuzzy(paths, run.settings.w_max)


async def fuzzy_precise(run: PruneRun, paths: Sequence[ReasoningPath]) -> list[ReasoningPath]:
    s = run.settings
    return await run.precise(run.fuzzy(paths, s.w1), s.w_max)


async def fuzzy_branch(run: PruneRun, paths: Sequence[ReasoningPath]) -> list[ReasoningPath]:
    s = run.settings
    return await run.branch(run.fuzzy(paths, s.w1), s.w_max)


async def three_step(run: PruneRun, paths: Sequence[ReasoningPath]) -> list[ReasoningPath]:
    s = run.settings
    kept = await run.branch(run.fuzzy(paths, s.w1), s.w2)
    return await run.precise(kept, s.w_max)


class UnknownStrategy(KeyError, ValueError):
    """A pruning strategy name no registry entry has."""

    def __str__(self) -> str:
        return str(self.args[0])


class PruningStrategies:
    """Strategy name -> async function, with a one-line description for `--help`."""

    def __init__(self) -> None:
        self._fns: dict[str, Strategy] = {}
        self._help: dict[str, str] = {}
        #: another accepted name -> the registered name (renamed strategies)
        self._aliases: dict[str, str] = {}

    def register(self, name: str, fn: Strategy, help: str = "") -> Strategy:
        if name in self._fns:
            raise ValueError(f"pruning strategy {name!r} is already registered")
        if name in self._aliases:
            raise ValueError(f"pruning strategy {name!r} is already an alias")
        self._fns[name], self._help[name] = fn, help
        return fn

    def alias(self, old: str, name: str) -> None:
        """Accept `old` for the registered strategy `name` (kept for renamed strategies)."""
        if name not in self._fns:
            raise UnknownStrategy(f"unknown pruning strategy {name!r}; one of {list(self._fns)}")
        if old in self._fns or old in self._aliases:
            raise ValueError(f"pruning strategy name {old!r} is already taken")
        self._aliases[old] = name

    def canonical(self, name: str) -> str:
        """The registered name `name` stands for (itself, or the target of an alias)."""
        name = self._aliases.get(name, name)
        if name not in self._fns:
            known = [*self._fns, *self._aliases]
            raise UnknownStrategy(f"unknown pruning strategy {name!r}; one of {known}")
        return name

    def aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    def get(self, name: str) -> Strategy:
        return self._fns[self.canonical(name)]

    def names(self) -> tuple[str, ...]:
        return tuple(self._fns)

    def describe(self, name: str) -> str:
        return self._help.get(name, "")

    def __contains__(self, name: object) -> bool:
        return name in self._fns or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        return iter(self._fns)


def default_strategies() -> PruningStrategies:
    """A new registry with Algorithm 2's four cases; fuzzy-precise (the paper's PoG setting)
    first. "precise" and "branch" (earlier names) are aliases."""
    reg = PruningStrategies()
    reg.register("fuzzy-precise", fuzzy_precise, "fuzzy W1 -> precise W_max (paper default)")
    reg.register("three-step", three_step, "fuzzy W1 -> branch W2 -> precise W_max")
    reg.register("fuzzy", fuzzy_only, "fuzzy W_max only (no LLM in pruning)")
    reg.register("fuzzy-branch", fuzzy_branch, "fuzzy W1 -> branch W_max")
    reg.alias("precise", "fuzzy-precise")
    reg.alias("branch", "fuzzy-branch")
    return reg


@dataclass
class Pruner:
    llm: ChatLLM
    fuzzy: FuzzySelector
    book: NameBook
    settings: PoGSettings
    strategies: PruningStrategies = field(default_factory=default_strategies)
    #: entity sets shown in part: (prompt kind, set) -> cut; kind "answering" or "selection"
    cuts: dict[tuple[str, tuple[str, ...]], SetCut] = field(default_factory=dict)

    async def render(self, paths: Sequence[ReasoningPath], *, selection: bool = False) -> list[str]:
        """Paths as LLM prompts show them, within the settings' entity-set bounds: the
        selection budget for PrecisePathSelect's prompts, the answering one otherwise."""
        s = self.settings
        budget = s.select_set_tokens if selection else s.set_tokens
        await self.book.ensure(displayed_ids(paths, s.set_items, budget))
        names = self.book.names
        kind = "selection" if selection else "answering"
        out = []
        for p in paths:
            out.append(render_path(p, names, max_items=s.set_items, max_tokens=budget))
            for ids, cut in cut_sets(p, names, s.set_items, budget):
                self.cuts[(kind, tuple(ids))] = cut
        return out

    def cut_note(self) -> str | None:
        """One line for `bounds_hit` when some entity set was shown in part."""
        if not self.cuts:
            return None
        s = self.settings
        parts = []
        for kind, budget in (("answering", s.set_tokens), ("selection", s.select_set_tokens)):
            cuts = [c for (k, _), c in self.cuts.items() if k == kind]
            if cuts:
                big = max(cuts, key=lambda c: c.total)
                parts.append(
                    f"{kind} prompts: {len(cuts)} set(s), the largest {big.total} members "
                    f"shown as {big.shown} (budget {budget} tokens a set)"
                )
        return f"entity sets cut (pog.set_items={s.set_items}): " + "; ".join(parts)

    def precise_selector(self, ctx: QuestionContext) -> Selector:
        async def select(paths: Sequence[ReasoningPath], w: int) -> list[ReasoningPath]:
            shown = await self.render(paths, selection=True)
            picked = await precise_select(self.llm, ctx, shown, w, self.settings)
            return [paths[i] for i in picked]

        return select

    async def prune(
        self,
        paths: Sequence[ReasoningPath],
        ctx: QuestionContext,
        entity_list: Sequence[str],
        indicator: str | None = None,
    ) -> Pruned:
        strategy = self.strategies.get(self.settings.strategy)
        out = Pruned([])  # (the strategy's paths: a search's TablePaths are never all made)
        if not paths:
            return out
        await self.book.ensure(displayed_ids(paths))
        ind = indicator or ctx.analysis.indicator
        if self.fuzzy.learned:  # trained on questions, not on the LLM's indicator
            ind = ctx.question
        out.paths = await strategy(PruneRun(self, ctx, entity_list, ind, out), paths)
        return out


def cut_sets(
    path: ReasoningPath, names: Mapping[str, str], max_items: int | None, max_tokens: int
) -> Iterator[tuple[Sequence[str], SetCut]]:
    """(set, cut) for each entity set of `path` shown in part under these bounds."""
    sets = [path.hops[0].src, *(h.dst for h in path.hops)] if path.hops else []
    for ids in sets:
        n = shown_count(ids, names, max_items=max_items, max_tokens=max_tokens)
        if n < len(ids):
            yield ids, SetCut(len(ids), n)
