"""The PoG pipeline: the paper's stages called in order, each timed, with per-question LLM
usage, a faithfulness check of the cited paths, and a named reason whenever a question ends
early. Without an LLM it runs the LLM-free mode (candidates, never an answer).

    topics    = recognize_topics(...)          # 4.1 topic entity recognition
    prepared  = prepare_graph(...)             # 4.1 subgraph detection + graph pruning
    analysis  = analyze_question(...)          # 4.1 question analysis
    outcome   = Explorer(...).run(...)         # 4.2-4.4 exploration, pruning, answering
    verified  = kg.contains(cited triples)     # faithfulness
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from kgreason.aio import run_sync
from kgreason.embed.base import Embedder
from kgreason.kg.base import InvalidIdentifierError, KGError, KnowledgeGraph, UnknownEntityError
from kgreason.kg.ranking import normalize_name
from kgreason.llm.base import (
    ChatLLM,
    LLMBudgetExceeded,
    LLMError,
    LLMOutputError,
    LLMTransportError,
)
from kgreason.llm.usage import Budget, MeteredLLM, UsageLedger
from kgreason.pog import answering
from kgreason.pog.analysis import analyze_question
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.evidence import Shown, shown_paths
from kgreason.pog.exploration import ExplorationOutcome, Explorer
from kgreason.pog.fuzzy import FuzzySelector, static_prefilter
from kgreason.pog.graph import prepare_graph
from kgreason.pog.llm_common import QuestionContext
from kgreason.pog.llm_free import run_llm_free
from kgreason.pog.pruning import Pruner, PruningStrategies, default_strategies
from kgreason.pog.render import NameBook
from kgreason.pog.settings import PoGSettings
from kgreason.pog.subgraph import EmptySubgraphError
from kgreason.pog.topic import TopicInput, given_topics, recognize_topics
from kgreason.pog.types import AnswerEntity, PoGResult, ReasoningPath
from kgreason.tracing import Callback, Tracer

if TYPE_CHECKING:
    from kgreason.config import LoadedSettings, Settings

#: exception type -> PoGResult.error_kind (first match wins)
ERROR_KINDS: tuple[tuple[type[Exception], str], ...] = (
    (UnknownEntityError, "unknown-entity"),
    (InvalidIdentifierError, "invalid-identifier"),
    (EmptySubgraphError, "empty-subgraph"),
    (KGError, "kg-error"),
    (LLMOutputError, "llm-unreadable-reply"),
    (LLMBudgetExceeded, "llm-budget-exceeded"),
    (LLMTransportError, "llm-unreachable"),
    (LLMError, "llm-error"),
)


def error_kind(e: Exception) -> str | None:
    named = getattr(type(e), "error_kind", None)  # transport errors name themselves
    if isinstance(named, str):
        return named
    return next((kind for cls, kind in ERROR_KINDS if isinstance(e, cls)), None)


def _selector(
    s: Settings, kg: KnowledgeGraph, embedder: Embedder, *, llm_free: bool
) -> FuzzySelector | None:
    """The FuzzySelector `pog.ranker`/`pog.fuzzy_stage` ask for (None: plain SBERT); its
    warnings (a ranker trained on another KG...) go to the `kgreason.pog` logger."""
    import logging

    from kgreason.pog.ranker.factory import build_selector

    fuzzy, warnings = build_selector(s.pog, kg, embedder, llm_free=llm_free)
    for w in warnings:
        logging.getLogger("kgreason.pog").warning("%s", w)
    return fuzzy


class PoG:
    """`PoG(kg, llm, embedder, settings).ask(question)`; `llm=None` selects LLM-free mode.
    `PoG.from_settings()` builds the parts from the settings; use it as a context manager
    (or call `aclose`/`close`) to release the KG it opened."""

    def __init__(
        self,
        kg: KnowledgeGraph,
        llm: ChatLLM | None,
        embedder: Embedder,
        settings: PoGSettings | None = None,
        *,
        budget: Budget | None = None,
        fuzzy: FuzzySelector | None = None,
        callbacks: Sequence[Callback] = (),
        strategies: PruningStrategies | None = None,
    ):
        self.kg = kg
        self.llm = llm
        self.embedder = embedder
        self.settings = settings or PoGSettings()
        self.budget = budget
        # shared across questions (and, when passed in, across PoG objects): path-text
        # embeddings recur on shared hubs
        self.fuzzy = fuzzy or FuzzySelector(
            embedder,
            prefilter=static_prefilter(embedder),
            prefilter_top=self.settings.fuzzy_prefilter,
        )
        #: tracing callbacks told of each stage's start and end (kgreason.tracing)
        self.callbacks = list(callbacks)
        #: the pruning strategies `settings.strategy` names one of
        self.strategies = strategies or default_strategies()
        # an unknown name fails here, not mid-question; an alias is recorded by its target
        canonical = self.strategies.canonical(self.settings.strategy)
        if canonical != self.settings.strategy:
            self.settings = self.settings.model_copy(update={"strategy": canonical})
        #: the KG this object opened (from_settings) and so must close; never a caller's
        self._owned_kg: KnowledgeGraph | None = None

    @property
    def llm_free_label(self) -> str:
        """What this pipeline's LLM-free answers are labelled (kgreason.pog.labels): by
        whether its path ranker answers, whatever a question's outcome."""
        from kgreason.pog.labels import mode_label

        return mode_label(self.fuzzy.answers, self.fuzzy.zero_shot)

    @classmethod
    def from_settings(
        cls,
        settings: Settings | LoadedSettings | str | Path | None = None,
        *,
        kg: KnowledgeGraph | None = None,
        llm: ChatLLM | None = None,
        embedder: Embedder | None = None,
        llm_free: bool = False,
        **kwargs: Any,
    ) -> Self:
        """Everything from `load_settings()` (or the given settings object or TOML path):
        the KG of `kg.*` (the bundled MetaQA KG by default), the LLM of `llm.*` (LLM-free
        mode when none is configured, or with `llm_free=True`), the embedder of `embed.*`,
        the per-question budget. Any part passed in is used instead and not closed here."""
        from kgreason.config import resolve_settings
        from kgreason.llm.factory import configured_llm, question_budget

        s = resolve_settings(settings)
        if embedder is None:
            from kgreason.embed.factory import build_embedder

            embedder = build_embedder(s.embed)
        if llm is None and not llm_free:
            llm = configured_llm(s.llm)
        kwargs.setdefault("budget", question_budget(s.llm))
        opened = None
        if kg is None:
            from kgreason.kg.open import open_kg

            kg = opened = open_kg(s.kg)
        if "fuzzy" not in kwargs:  # the path ranker of `pog.ranker`, as `kgreason ask` uses
            kwargs["fuzzy"] = _selector(s, kg, embedder, llm_free=llm_free or llm is None)
        pog = cls(kg, None if llm_free else llm, embedder, s.pog, **kwargs)
        pog._owned_kg = opened
        return pog

    async def aclose(self) -> None:
        """Close the KG that `from_settings` opened (a KG passed in is the caller's)."""
        if self._owned_kg is not None:
            await self._owned_kg.aclose()

    def close(self) -> None:
        run_sync(self.aclose())

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ask(self, question: str, topic_entities: TopicInput | None = None) -> PoGResult:
        """`ask_async` from sync code; inside a running event loop (Jupyter) it runs on a
        worker thread's loop (`kgreason.aio.run_sync`). In async code, await `ask_async`."""
        return run_sync(self.ask_async(question, topic_entities))

    async def ask_async(self, question: str, topic_entities: TopicInput | None = None) -> PoGResult:
        """Answer one question (the LLM-free mode when there is no LLM). Also `aask`."""
        if self.llm is None:
            return await self._llm_free(question, topic_entities)
        s = self.settings
        ledger = UsageLedger()
        llm = MeteredLLM(self.llm, ledger, self.budget)
        result = PoGResult(question=question, mode=s.variant)
        tr = Tracer("pog", self.callbacks, ledger=ledger)
        explorer: Explorer | None = None
        pruner: Pruner | None = None
        prepared = None
        t_start = time.perf_counter()
        try:
            with tr.stage("topic_entity") as st:
                topics = await recognize_topics(
                    self.kg, llm, self.embedder, question, s, topic_entities
                )
                st.size(topics=len(topics))
                st.note(topics=[t.id for t in topics])
            result.topic_entities = topics
            with tr.stage("graph", topics=len(topics)) as st:
                prepared = await prepare_graph(
                    self.kg, [t.id for t in topics], s, keep_self_loops=s.revisits()
                )
                st.size(triples=prepared.stats.triples, reduced=prepared.stats.reduced_triples)
                st.note(reduction=prepared.reduction.note)
            result.timings_s.update(tr.timings_s)  # keys in the order they always had
            result.timings_s.update(prepared.timings_s)
            result.subgraph = prepared.stats
            result.bounds_hit += prepared.bounds_hit
            if not prepared.subgraph.triples:
                names = ", ".join(f"{t.name} ({t.id})" for t in topics)
                raise EmptySubgraphError(f"no KG edge around the topic entities: {names}")
            with tr.stage("question_analysis") as st:
                analysis = await analyze_question(llm, question, topics, s)
                st.size(depth=analysis.predicted_depth)
            result.analysis = analysis
            ctx = QuestionContext(question, tuple(topics), analysis)
            book = NameBook(self.kg, {t.id: t.name for t in topics})
            pruner = Pruner(llm, self.fuzzy, book, s, self.strategies)
            explorer = Explorer(self.kg, llm, pruner, prepared, s, self.embedder)
            with tr.stage("exploration") as st:
                outcome = await explorer.run(ctx)
                st.size(phase=outcome.phase, paths=len(outcome.paths))
            with tr.stage("faithfulness") as st:
                await self._finish(result, outcome, book, prepared.graph)
                st.size(unverified=len(result.unverified_triples))
        except Exception as e:
            kind = error_kind(e)
            if kind is None:
                raise
            result.error_kind, result.error = kind, str(e)
            if explorer is not None and prepared is not None and explorer.latest:
                result.show(self._shown(prepared.graph, explorer.latest))
        finally:
            result.timings_s.update(tr.timings_s)
            result.trace = tr.trace
            if explorer is not None:
                result.trace += explorer.trace
                result.bounds_hit += explorer.bounds_hit
            if pruner is not None and (note := pruner.cut_note()):
                result.bounds_hit.append(note)
            result.usage = ledger.to_dict()
            result.timings_s["total"] = time.perf_counter() - t_start
        return result

    def _shown(self, graph: ClusteredGraph, paths: Sequence[ReasoningPath]) -> Shown:
        """The paths as the result shows them (pog/evidence.py), with their triples."""
        s = self.settings
        return shown_paths(graph, paths, s.result_members, s.result_triples)

    #: the same verbs as SymbolLKG's `solve`/`asolve` (and `solve_async`)
    aask = ask_async

    async def _finish(
        self, result: PoGResult, outcome: ExplorationOutcome, book: NameBook, graph: ClusteredGraph
    ) -> None:
        paths: list[ReasoningPath] = list(outcome.paths)  # (whole: the answers are named in them)
        result.phase = outcome.phase
        result.show(self._shown(graph, paths))
        result.raw_answer = outcome.raw
        by_name: dict[str, str] = {}
        for p in paths:
            for e in sorted(p.entities()):
                by_name.setdefault(normalize_name(book.get(e)), e)
        names = answering.rejoin_names(outcome.answers, lambda n: normalize_name(n) in by_name)
        result.answers = [AnswerEntity(n, by_name.get(normalize_name(n))) for n in names]
        cited = [t for p in result.paths for t in p.triples()]
        if cited:
            ok = await self.kg.contains(cited)
            result.unverified_triples = [t for t, k in zip(cited, ok, strict=True) if not k]

    async def _llm_free(self, question: str, topic_entities: TopicInput | None) -> PoGResult:
        ids = None
        if topic_entities:
            try:
                ids = await given_topics(
                    self.kg, self.embedder, topic_entities, threshold=self.settings.link_threshold
                )
            except KGError as e:
                r = PoGResult(question=question, mode="llm-free")
                r.error_kind, r.error = error_kind(e), str(e)
                return r
        try:
            with Tracer("pog", self.callbacks).stage("llm_free") as st:
                r = await run_llm_free(self.kg, self.fuzzy, self.settings, question, ids)
                st.size(candidates=len(r.candidates), paths=len(r.paths))
                st.size(**{f"{k}_ms": round(v * 1000, 1) for k, v in r.timings_s.items()})
            return r
        except KGError as e:
            r = PoGResult(question=question, mode="llm-free")
            r.error_kind, r.error = error_kind(e), str(e)
            return r
