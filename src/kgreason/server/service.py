"""The server's warm state and operations, free of any transport (HTTP and MCP share it).

The KG, the embedder, the path ranker and the LLM stack are loaded once, in
`Service.from_settings`; each question then builds a cheap per-request `PoG` over those
warm parts (its own settings overrides and stage callback) and runs under the service's
concurrency limit and deadline. Only kgreason's public API is used here.

KG reads (`search`, `entity`, `explain`) are coroutines in every backend; `asearch`,
`aentity`, `aexplain` are the ones to await in async code, and `search`, `entity`,
`explain` are their blocking forms for sync callers."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import kgreason
from kgreason.server.errors import ServiceError
from kgreason.server.kg_reads import KGReads
from kgreason.server.models import AskRequest, SolveRequest
from kgreason.server.results import DEFAULT_PAGE, ResultPages, bounded, page, pages_block
from kgreason.tracing import Callback, StageEvent

if TYPE_CHECKING:
    from kgreason import KnowledgeGraph, PoG, PoGResult, Settings, SymbolLKG

#: shown with LLM-free results, as `kgreason ask` prints them (kgreason/cli/ask.py)

StageCallback = Callable[[StageEvent], None]
T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """Per-process limits on the question operations (ask, solve)."""

    #: questions running at once; one more is refused with `busy` (429)
    max_concurrency: int = 4
    #: seconds one question may take before it is cancelled with `deadline` (504)
    deadline_s: float = 60.0
    #: what a refused client is told to wait (seconds)
    retry_after_s: int = 1
    #: results kept for paging (/v1/results/{id}/...), the oldest dropped first
    kept_results: int = 32


def stage_event_dict(ev: StageEvent) -> dict[str, Any]:
    """A tracer event as the stream sends it (milliseconds, not seconds)."""
    return {
        "kind": ev.kind,
        "pipeline": ev.pipeline,
        "stage": ev.stage,
        "elapsed_ms": round(ev.elapsed_s * 1000, 3),
        "sizes": dict(ev.sizes),
        "usage": dict(ev.usage),
        "error": ev.error,
    }


class Service(KGReads):
    """Warm parts plus the operations. Build with `from_settings`; close with `aclose`."""

    def __init__(
        self,
        kg: KnowledgeGraph,
        pog: PoG,
        lkg: SymbolLKG,
        *,
        llm_free: bool,
        limits: Limits | None = None,
        pog_free: PoG | None = None,
        owner: PoG | None = None,
    ):
        self.kg, self.pog, self.lkg = kg, pog, lkg
        #: True when questions default to the LLM-free mode (no LLM, or asked for)
        self.llm_free = llm_free
        #: the LLM-free pipeline (== pog when the service is LLM-free)
        self.pog_free = pog_free or pog
        self.limits = limits or Limits()
        #: recent results, for paging through the sets a reply shows in part
        self.results = ResultPages(self.limits.kept_results)
        #: run LLM-free questions on a worker thread (see `_pool`)
        self.offload_llm_free = True
        self._inflight = 0
        self._closed = False
        self._pools: dict[str, ThreadPoolExecutor] = {}
        #: the pipeline that opened the KG, closed with the service (None: the caller's KG)
        self._owner = owner

    @classmethod
    def from_settings(
        cls,
        settings: Settings | str | Path | None = None,
        *,
        kg: str | None = None,
        llm_free: bool | None = None,
        limits: Limits | None = None,
    ) -> Service:
        """Load everything once: the KG (`kg`: a store directory; default the bundled
        MetaQA KG, as `kgreason ask`), the embedder, the ranker and the LLM of the
        settings. `llm_free=True` never uses an LLM for questions; None uses one when
        configured."""
        s = (
            kgreason.load_settings(settings).settings
            if settings is None or isinstance(settings, str | Path)
            else settings
        )
        if kg is not None:
            s = s.model_copy(update={"kg": s.kg.model_copy(update={"store": kg})})
        pog_free = kgreason.PoG.from_settings(s, llm_free=True)
        pog = pog_free
        if not llm_free:
            with_llm = kgreason.PoG.from_settings(
                s, kg=pog_free.kg, embedder=pog_free.embedder, llm_free=False
            )
            if with_llm.llm is not None:
                pog = with_llm
        # one LLM stack for both pipelines (one concurrency limit, one cache); none at all
        # when questions are LLM-free, so /v1/solve then runs programs only
        lkg = (
            kgreason.SymbolLKG.from_settings(s, llm=pog.llm, embedder=pog_free.embedder)
            if pog.llm is not None
            else kgreason.SymbolLKG(None, pog_free.embedder, s.lkg)
        )
        return cls(
            pog_free.kg, pog, lkg, llm_free=pog.llm is None, limits=limits,
            pog_free=pog_free, owner=pog_free,
        )  # fmt: skip

    # -- state -----------------------------------------------------------------------

    @property
    def llm_free_label(self) -> str:
        """What this server's LLM-free answers are labelled (the banner says it too)."""
        return self.pog_free.llm_free_label

    @property
    def inflight(self) -> int:
        """Questions running now (ask and solve)."""
        return self._inflight

    @property
    def worker(self) -> int | None:
        """This process's index under `kgreason serve --workers N` (None: the only one)."""
        return self.results.worker

    @worker.setter
    def worker(self, value: int | None) -> None:
        self.results.worker = value

    def info(self) -> dict[str, Any]:
        """What /healthz reports: the KG, the mode, the load."""
        return {
            "kg": str(getattr(self.kg, "name", type(self.kg).__name__)),
            "llm": not self.llm_free,
            "mode": "llm-free" if self.llm_free else "pog",
            "inflight": self._inflight,
            "max_concurrency": self.limits.max_concurrency,
            "deadline_s": self.limits.deadline_s,
            **({"worker": self.worker} if self.worker is not None else {}),
        }

    async def drain(self, timeout: float | None = None) -> bool:
        """Wait until no question is running (graceful shutdown); False on timeout."""
        t_end = None if timeout is None else time.monotonic() + timeout
        while self._inflight:
            if t_end is not None and time.monotonic() >= t_end:
                return False
            await asyncio.sleep(0.02)
        return True

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for pool in self._pools.values():
            await asyncio.to_thread(pool.shutdown, wait=True)
        if self._owner is not None:
            await self._owner.aclose()

    # -- questions ------------------------------------------------------------------

    async def _guarded(
        self,
        what: str,
        coro_fn: Callable[[], Awaitable[T]] | None = None,
        *,
        blocking: Callable[[], T] | None = None,
        pool: str = "",
    ) -> T:
        """Run one question under the concurrency limit and the deadline: a coroutine on
        this loop, or a `blocking` call on the named worker pool. A blocking call cannot be
        interrupted: at the deadline the client gets its 504 at once, but the slot stays
        taken until the call really ends, so the limit counts the work actually running."""
        if self._closed:
            raise ServiceError("shutting-down", "the server is shutting down", 503)
        if self._inflight >= self.limits.max_concurrency:
            raise ServiceError(
                "busy",
                f"{self._inflight} questions are running (limit "
                f"{self.limits.max_concurrency}); retry later",
                429,
                retry_after=self.limits.retry_after_s,
            )
        self._inflight += 1
        released_by_thread = False
        try:
            async with asyncio.timeout(self.limits.deadline_s):
                if blocking is None:
                    assert coro_fn is not None
                    return await coro_fn()
                cf = self._pool(pool).submit(blocking)
                released_by_thread = True
                cf.add_done_callback(self._release_from(asyncio.get_running_loop()))
                return await asyncio.wrap_future(cf)
        except TimeoutError as e:
            raise ServiceError(
                "deadline",
                f"the {what} did not finish within the {self.limits.deadline_s:g} s deadline",
                504,
            ) from e
        finally:
            if not released_by_thread:
                self._inflight -= 1

    def _release_from(self, loop: asyncio.AbstractEventLoop) -> Callable[[Any], None]:
        def release(_: Any) -> None:
            # the loop may be gone (process exit): nothing is left to count then
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._release)

        return release

    def _release(self) -> None:
        self._inflight -= 1

    def _pool(self, name: str) -> ThreadPoolExecutor:
        """Worker threads: "llm-free" has one (CPU-bound questions, one at a time, off the
        event loop so it keeps answering), "programs" one per allowed question."""
        pool = self._pools.get(name)
        if pool is None:
            workers = 1 if name == "llm-free" else self.limits.max_concurrency
            pool = self._pools[name] = ThreadPoolExecutor(workers, f"kgreason-{name}")
        return pool

    def _offloaded(self, req: AskRequest) -> bool:
        return self.offload_llm_free and bool(req.llm_free or self.llm_free)

    def _pipeline(self, req: AskRequest, on_stage: StageCallback | None) -> PoG:
        if req.llm_free is False and self.llm_free:
            raise ServiceError(
                "needs-llm", "llm_free=false, but the server has no LLM configured", 400
            )
        base = self.pog_free if (req.llm_free or self.llm_free) else self.pog
        updates = {k: v for k, v in (("strategy", req.strategy), ("variant", req.variant)) if v}
        try:
            settings = base.settings.model_copy(update=updates)
            callbacks: list[Callback] = list(base.callbacks)
            if on_stage is not None:
                callbacks.append(cast("Callback", on_stage))
            return type(base)(
                base.kg, base.llm, base.embedder, settings, budget=base.budget,
                fuzzy=base.fuzzy, callbacks=callbacks,
                strategies=base.strategies,
            )  # fmt: skip
        except (KeyError, ValueError) as e:
            raise ServiceError("bad-request", f"strategy: {e}", 400) from e

    async def ask(self, req: AskRequest, on_stage: StageCallback | None = None) -> dict[str, Any]:
        """PoG (or the LLM-free mode) on one question: the result's `to_dict()` plus
        `request_id`, `elapsed_ms`, `label` (LLM-free mode) and `entity_names`."""
        t0 = time.perf_counter()
        if self._offloaded(req):  # no LLM: CPU-bound throughout, so on a worker thread
            loop = asyncio.get_running_loop()
            relay = None
            if on_stage is not None:
                cb = on_stage

                def relay(ev: StageEvent) -> None:
                    loop.call_soon_threadsafe(cb, ev)  # in order, before the result

            pog = self._pipeline(req, relay)
            question, topics = req.question, req.topics
            result = await self._guarded(
                "question",
                blocking=lambda: asyncio.run(pog.ask_async(question, topics)),
                pool="llm-free",
            )
        else:
            pog = self._pipeline(req, on_stage)
            result = await self._guarded(
                "question", lambda: pog.ask_async(req.question, req.topics)
            )
        if result.error_kind == "unknown-entity":
            raise ServiceError("unknown-entity", result.error or "unknown entity", 404)
        data = await self._result_dict(result)
        rid = self.results.keep(result)
        data["result_id"] = rid
        data["pages"] = pages_block(rid, data, self.results.get(rid))
        data["request_id"] = uuid.uuid4().hex
        data["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 3)
        return data

    async def _result_dict(self, result: PoGResult) -> dict[str, Any]:
        shown, totals = bounded(result)
        data = shown.to_dict()
        data.update(totals)
        label = result.label
        if label is not None:
            data["label"] = label
        ids = sorted({e for p in result.paths for e in p.entities()})
        try:
            data["entity_names"] = await self.kg.names(ids) if ids else {}
        except kgreason.KGError:
            data["entity_names"] = {}
        return data

    async def result_page(
        self, rid: str, k: int | None, offset: int = 0, limit: int = DEFAULT_PAGE
    ) -> dict[str, Any]:
        """One page of a kept result's set k (None: of its answers), with names."""
        kept = self.results.get(rid)
        base = f"/v1/results/{rid}"
        if k is None:
            answers, nxt = page(kept.answers, offset, limit, f"{base}/answers")
            return {
                "result_id": rid, "total": len(kept.answers), "offset": offset,
                "limit": limit, "answers": [{"id": a.id, "name": a.name} for a in answers],
                "next": nxt,
            }  # fmt: skip
        if not 0 <= k < len(kept.sets):
            raise ServiceError(
                "unknown-set", f"result {rid} has sets 0..{len(kept.sets) - 1}, not {k}", 404
            )
        s = kept.sets[k]
        ids, nxt = page(s.members, offset, limit, f"{base}/sets/{k}")
        try:
            names = await self.kg.names(list(ids)) if ids else {}
        except kgreason.KGError:
            names = {}
        return {
            "result_id": rid, "k": k, "path": s.path, "position": s.position,
            "total": len(s.members), "offset": offset, "limit": limit,
            "members": [{"id": e, "name": names.get(e, e)} for e in ids], "next": nxt,
        }  # fmt: skip

    async def solve(self, req: SolveRequest) -> dict[str, Any]:
        """SymbolLKG on a text, or an existing program run with no LLM."""
        if req.program is not None:
            program = req.program

            def run_program() -> dict[str, Any]:
                return self.lkg.run_program(
                    program, req.solver,
                    question=req.question or "", options=req.options, dataset=req.dataset,
                )  # fmt: skip

            try:
                out = await self._guarded("program", blocking=run_program, pool="programs")
            except ValueError as e:  # unknown format or solver
                raise ServiceError("bad-program", str(e), 400) from e
            return out
        if self.lkg.llm is None:
            raise ServiceError(
                "needs-llm",
                "SymbolLKG needs an LLM (none configured); to run an existing solver "
                "program without one, send {'program': ..., 'solver': ...}",
                400,
            )
        context, question = req.context or "", req.question or ""
        res = await self._guarded(
            "problem", lambda: self.lkg.asolve(context, question, req.options)
        )
        solved: dict[str, Any] = res.to_dict()
        return solved
