"""SymbolLKG end to end: construct the LKG of a context, retrieve the logical hull for the
question, route it, generate and repair a solver program, and return a typed result with
everything that happened (route decision, every attempt, subgraph, per-stage usage).

Failures are results, not exceptions: an unreadable extraction, a transport error or an
exhausted budget ends the problem with `status="error"` and the reason, so a batch goes on.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

from pydantic import BaseModel, Field, model_validator

from kgreason.aio import run_sync
from kgreason.embed.base import Embedder
from kgreason.lkg.backup import backup_letter, option_letters
from kgreason.lkg.codegen import Attempt, ProgramGenerator
from kgreason.lkg.construction import LKGBuilder
from kgreason.lkg.execute import ProgramExecutor
from kgreason.lkg.index import LKGIndex
from kgreason.lkg.options import options_kind, split_option
from kgreason.lkg.retrieval import HybridRetriever, RetrievedSubgraph
from kgreason.lkg.router import RouteDecision, route
from kgreason.lkg.settings import LKGSettings
from kgreason.lkg.solvers.base import SolverLimits
from kgreason.lkg.solvers.registry import SolverRegistry, default_solvers
from kgreason.lkg.solvers.sandbox import Sandbox
from kgreason.lkg.storage import LKGStore
from kgreason.llm.base import ChatLLM, LLMError
from kgreason.llm.usage import Budget, MeteredLLM, UsageLedger
from kgreason.result import ResultBase, llm_error_kind
from kgreason.tracing import Callback, Tracer

if TYPE_CHECKING:
    from kgreason.config import LoadedSettings, Settings
    from kgreason.lkg.qa import QAResult

NEEDS_LLM = (
    "SymbolLKG needs an LLM (set OPENAI_BASE_URL / OPENAI_API_KEY) to build the graph and "
    "write the solver program; to run an existing program without one, use "
    "`kgreason solve --program FILE`"
)


class LKGNeedsLLM(LLMError):
    """Raised when a stage that only an LLM can do is asked for without one."""


class SolveResult(ResultBase, BaseModel):
    """One problem's outcome. `ok`/`error_kind`/`trace`/`usage`/`timings_s` and
    `to_dict()` are shared with PoGResult (kgreason.result)."""

    id: str | None = None
    question: str
    options: list[str] = Field(default_factory=list)
    #: the option letter when options were given, else True/False/Unknown
    verdict: str | None = None
    #: the solver-level answer (True/False/Unknown, or the option letter)
    answer: str | None = None
    #: the verdict is the random backup of an unsolved problem (`lkg.backup_answer`)
    backup: bool = False
    #: the option the random backup picks for this unsolved problem (seeded by its id),
    #: recorded under either setting so both accuracies come from the same results
    backup_answer: str | None = None
    status: Literal["solved", "unsolved", "error"] = "unsolved"
    #: None when solved; "no-verdict" when unsolved; the LLM error's kind on error
    error_kind: str | None = None
    error: str | None = None
    route: RouteDecision | None = None
    #: the program that produced the verdict (else the last one tried)
    program: str | None = None
    #: the last solver result: status, verdict, proof, model, values, error_kind, details
    solver: dict | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    subgraph: RetrievedSubgraph | None = None
    lkg_counts: dict[str, int] = Field(default_factory=dict)
    lkg_rejected: list[str] = Field(default_factory=list)
    usage: dict = Field(default_factory=dict)
    timings_s: dict[str, float] = Field(default_factory=dict)
    #: one record per stage that left notes (kgreason.tracing)
    trace: list[dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _kind(self) -> SolveResult:
        """A result built with only a status (the CLI's per-problem errors) names a kind."""
        if self.error_kind is None and self.status != "solved":
            self.error_kind = "no-verdict" if self.status == "unsolved" else "error"
        return self


def answer_to_verdict(answer: str | None, options: Sequence[str] | None) -> str | None:
    """Map a solver answer to the option letter whose text says it (True -> 'A) True');
    "Unknown" also matches an "Uncertain" option. Without options the answer is the verdict."""
    if answer is None or not options:
        return answer
    if options_kind(options) == "statements":
        return answer
    want = {"unknown": {"unknown", "uncertain"}}.get(answer.lower(), {answer.lower()})
    for i, o in enumerate(options):
        letter, text = split_option(o)
        if text.strip(" .").lower() in want:
            return letter or chr(65 + i)
    return None


def solver_limits(s: LKGSettings) -> SolverLimits:
    return SolverLimits(
        cpu_s=s.solver_timeout_s, memory_mb=s.solver_memory_mb, wall_s=s.solver_timeout_s * 1.5 + 1
    )


class SymbolLKG:
    def __init__(
        self,
        llm: ChatLLM | None,
        embedder: Embedder | None = None,
        settings: LKGSettings | None = None,
        *,
        budget: Budget | None = None,
        sandbox: Sandbox | None = None,
        prune: bool = True,
        include_context: bool | None = None,
        callbacks: Sequence[Callback] = (),
        solvers: SolverRegistry | None = None,
    ):
        self.llm, self.embedder = llm, embedder
        #: tracing callbacks told of each stage's start and end (kgreason.tracing)
        self.callbacks = list(callbacks)
        self.settings = settings or LKGSettings()
        self.budget = budget
        self.prune = prune
        #: the solver prompt also shows the raw context (ours; None: `lkg.include_context`,
        #: off by default: the paper compiles only G_final, sections 3.4 and A.2)
        self.include_context = (
            self.settings.include_context if include_context is None else include_context
        )
        limits = solver_limits(self.settings)
        self.executor = ProgramExecutor(
            limits, sandbox or Sandbox(limits), solvers or default_solvers()
        )
        #: one retrieval index per persistent store, rebuilt only when the store changes
        self._indices: weakref.WeakKeyDictionary[LKGStore, LKGIndex] = weakref.WeakKeyDictionary()

    @classmethod
    def from_settings(
        cls,
        settings: Settings | LoadedSettings | str | Path | None = None,
        *,
        llm: ChatLLM | None = None,
        embedder: Embedder | None = None,
        embed: bool = True,
        **kwargs: Any,
    ) -> Self:
        """Everything from `load_settings()` (or the given settings object or TOML path):
        the LLM of `llm.*` (None when none is configured: `solve` then raises
        LKGNeedsLLM), the embedder of `embed.*` (none with `embed=False`: BM25 and exact
        anchors only), the `lkg.*` settings and the per-question budget. Parts passed in
        are used instead."""
        from kgreason.config import resolve_settings
        from kgreason.llm.factory import configured_llm, question_budget

        s = resolve_settings(settings)
        if llm is None:
            llm = configured_llm(s.llm)
        if embedder is None and embed:
            from kgreason.embed.factory import build_embedder

            embedder = build_embedder(s.embed)
        kwargs.setdefault("budget", question_budget(s.llm))
        return cls(llm, embedder, s.lkg, **kwargs)

    def _metered(self, ledger: UsageLedger) -> MeteredLLM:
        if self.llm is None:
            raise LKGNeedsLLM(NEEDS_LLM)
        return MeteredLLM(self.llm, ledger, self.budget)

    def retriever(
        self, store: LKGStore, llm: ChatLLM | None, *, hull_facts: bool = False
    ) -> HybridRetriever:
        s = self.settings
        index = self._indices.get(store)
        if index is None:
            index = self._indices[store] = LKGIndex(
                store, self.embedder, bm25_names_only=s.bm25_names_only
            )
        return HybridRetriever(
            index, tau=s.tau_for(self.embedder.name if self.embedder else None),
            hops=s.hull_hops, top_k=s.top_k,
            llm=llm, prune=self.prune, hull_facts=hull_facts,
        )  # fmt: skip

    def solve(
        self,
        context: str,
        question: str,
        options: Sequence[str] | None = None,
        *,
        id: str | None = None,
    ) -> SolveResult:
        """`asolve` from sync code; inside a running event loop (Jupyter) it runs on a
        worker thread's loop (`kgreason.aio.run_sync`). In async code, await `asolve`."""
        return run_sync(self.asolve(context, question, options, id=id))

    async def asolve(
        self,
        context: str,
        question: str,
        options: Sequence[str] | None = None,
        *,
        id: str | None = None,
        store: LKGStore | None = None,
    ) -> SolveResult:
        """Solve one problem. With `store`, retrieve from that (persistent) LKG instead of
        building one from `context` (which may then be empty)."""
        ledger = UsageLedger()
        llm = self._metered(ledger)
        res = SolveResult(id=id, question=question, options=list(options or []))
        tr = Tracer("lkg", self.callbacks, ledger=ledger)
        own_store = store is None
        try:
            with tr.stage("construct") as st:
                if store is None:
                    graph = await LKGBuilder(
                        llm, temperature=self.settings.temperature,
                        max_tokens=self.settings.max_tokens,
                    ).extract(context, question)  # fmt: skip
                    store = LKGStore()
                    store.add_document(context, graph, source=id or "")
                    res.lkg_rejected = graph.rejected
                res.lkg_counts = store.counts()
                st.size(**res.lkg_counts, rejected=len(res.lkg_rejected))
            with tr.stage("retrieve") as st:
                query = " ".join([question, *(split_option(o)[1] for o in options or [])])
                sub = await self.retriever(store, llm).retrieve(query)
                res.subgraph = sub
                st.size(nodes=len(sub.nodes), edges=len(sub.edges))
            with tr.stage("route") as st:
                res.route = await route(llm, sub, question, options, solvers=self.executor.solvers)
                st.size(route=res.route.route)
                st.note(route=res.route.route)
            with tr.stage("codegen") as st:
                gen = ProgramGenerator(
                    llm, self.executor, max_repairs=self.settings.max_repairs,
                    temperature=self.settings.temperature, max_tokens=self.settings.max_tokens,
                    repair_unusable=self.settings.repair_unusable,
                )  # fmt: skip
                out = await gen.generate(
                    res.route.route, question, options, sub,
                    context if self.include_context else "",
                )  # fmt: skip
                st.size(attempts=len(out.attempts), answer=out.answer)
                st.note(attempts=[a.status for a in out.attempts])
            res.attempts, res.solver, res.program = out.attempts, out.solver, out.program
            res.answer = out.answer
            res.verdict = answer_to_verdict(out.answer, options)
            if res.verdict is not None:
                res.status, res.error_kind = "solved", None
            else:
                last = out.attempts[-1] if out.attempts else None
                res.error_kind = "no-verdict"
                res.error = (
                    f"no verdict after {len(out.attempts)} attempt(s): "
                    f"{last.error_kind or last.status}: {last.error}"
                    if last and last.error
                    else f"the answer {out.answer!r} matches no option"
                )
        except LLMError as e:
            res.status, res.error = "error", f"{type(e).__name__}: {e}"
            res.error_kind = llm_error_kind(e) or "llm-error"
        finally:
            if own_store and store is not None:
                store.close()
        self._backup(res)
        res.usage = ledger.to_dict()
        res.timings_s = {k: round(v, 4) for k, v in tr.timings_s.items()}
        res.trace = tr.trace
        return res

    def _backup(self, res: SolveResult) -> None:
        """Record the random backup of a problem left without a verdict (unsolved or
        ended by an error), and answer with it under `lkg.backup_answer = "random"`."""
        if res.verdict is not None or not res.options:
            return
        res.backup_answer = backup_letter(res.id or res.question, option_letters(res.options))
        if self.settings.backup_answer == "random" and res.backup_answer is not None:
            res.verdict, res.backup = res.backup_answer, True

    #: the same verbs as PoG's `ask`/`ask_async` (and `aask`)
    solve_async = asolve

    async def aanswer(
        self, passages: Sequence[tuple[str, str]], question: str, *, id: str | None = None
    ) -> QAResult:
        """Multi-hop QA (sections 4.3-4.4): the free-text answer of `question` from its
        (title, text) passages, with the retrieved premises and their titles
        (`kgreason.lkg.qa`). Raises LKGNeedsLLM without an LLM: the graph is built by one."""
        from kgreason.lkg.qa import answer_passages

        ledger = UsageLedger()
        return await answer_passages(self, self._metered(ledger), ledger, passages, question, id=id)

    def answer(
        self, passages: Sequence[tuple[str, str]], question: str, *, id: str | None = None
    ) -> QAResult:
        """`aanswer` from sync code."""
        return run_sync(self.aanswer(passages, question, id=id))

    def run_program(
        self,
        text: str,
        fmt: str | None = None,
        *,
        question: str = "",
        options: Sequence[str] | None = None,
        dataset: str | None = None,
    ) -> dict[str, Any]:
        """Run an existing solver program with no LLM, on this pipeline's sandbox, limits
        and solvers (`kgreason.lkg.programs.run_program`): the outcome as a JSON-ready
        dict. An unknown format raises ProgramFormatError (a ValueError)."""
        from dataclasses import asdict

        from kgreason.lkg.programs import run_program

        ex = self.executor
        out = run_program(
            text, fmt, question=question, options=options, dataset=dataset,
            limits=ex.limits, sandbox=ex.sandbox, solvers=ex.solvers,
        )  # fmt: skip
        return asdict(out)
