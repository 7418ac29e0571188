"""Per-stage usage accounting and per-question budgets.

A `UsageLedger` is created per question (or per run) and a `MeteredLLM` wraps the shared LLM
stack with it, so every answer's trace carries its own figures and no global state is needed.

Two call counts sit side by side. `calls` is every request sent (what a provider bills).
`paper_calls` counts as the PoG paper does (Tables 4, 5, 7, 8: one call per reasoning step):
a stage opens a step with `paper_step(llm, stage)`, and only the first request inside it is a
paper call, so the re-ask of an unreadable reply and the 40-path batches of one precise
selection add raw calls only. A request outside any step is one of each.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from typing import Concatenate, ParamSpec, TypeVar, Unpack

from kgreason.llm.base import CallOptions, ChatLLM, Completion, LLMBudgetExceeded, Message
from kgreason.tracing import call_span

log = logging.getLogger("kgreason.llm")


@dataclass
class StageUsage:
    calls: int = 0
    #: calls as the PoG paper counts them (module docstring): re-asks and extra batches of
    #: one step are in `calls` only
    paper_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    latency_s: float = 0.0
    #: calls whose token counts were estimated locally (server omitted `usage`)
    estimated: int = 0

    def add(self, c: Completion, latency_s: float, paper: bool = True) -> None:
        self.calls += 1
        self.paper_calls += int(paper)
        self.prompt_tokens += c.usage.prompt_tokens
        self.completion_tokens += c.usage.completion_tokens
        self.cache_hits += int(c.cached)
        self.latency_s += latency_s
        self.estimated += int(c.usage.estimated)

    def merge(self, other: StageUsage) -> None:
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)


@dataclass
class UsageLedger:
    stages: dict[str, StageUsage] = field(default_factory=dict)

    def record(self, stage: str, c: Completion, latency_s: float, paper: bool = True) -> None:
        self.stages.setdefault(stage, StageUsage()).add(c, latency_s, paper)

    def total(self) -> StageUsage:
        t = StageUsage()
        for s in self.stages.values():
            t.merge(s)
        return t

    def to_dict(self) -> dict[str, dict[str, float]]:
        out = {k: asdict(v) for k, v in sorted(self.stages.items())}
        out["total"] = asdict(self.total())
        return out


@dataclass(frozen=True)
class Budget:
    max_calls: int | None = None
    max_tokens: int | None = None


class MeteredLLM:
    """Records every call in a ledger and refuses calls that a budget does not allow.

    The budget is checked before a call (calls) and after it (tokens): a call that pushes
    the token total over the cap is kept in the ledger, and the next call is refused.
    Calls in flight count against the call budget, so concurrent calls within one question
    cannot all pass the check before any of them is recorded.
    A MeteredLLM serves one question, whose stages run one after another, so the open
    reasoning step (`step`) is plain instance state.
    """

    def __init__(self, inner: ChatLLM, ledger: UsageLedger, budget: Budget | None = None):
        self.inner = inner
        self.ledger = ledger
        self.budget = budget or Budget()
        self.model = inner.model
        self._in_flight = 0
        #: a reasoning step is open / its first request has been counted as a paper call
        self._step_open = False
        self._step_counted = False

    @contextmanager
    def step(self, stage: str) -> Iterator[None]:
        """One reasoning step (the PoG paper's unit of LLM calls): only its first request is
        a paper call. A nested step joins the open one. An inner MeteredLLM (an eval run's
        ledger beneath PoG's own) sees the same step."""
        outer = self._step_open
        if not outer:
            self._step_open, self._step_counted = True, False
        inner = self.inner.step(stage) if isinstance(self.inner, MeteredLLM) else nullcontext()
        try:
            with inner:
                yield
        finally:
            if not outer:
                self._step_open = False

    async def complete(self, messages: list[Message], **opts: Unpack[CallOptions]) -> Completion:
        stage = opts["stage"]
        total = self.ledger.total()
        b = self.budget
        if b.max_calls is not None and total.calls + self._in_flight >= b.max_calls:
            raise LLMBudgetExceeded(
                f"budget of {b.max_calls} LLM calls per question reached before stage '{stage}'",
                stage=stage,
            )
        if (
            b.max_tokens is not None
            and total.prompt_tokens + total.completion_tokens >= b.max_tokens
        ):
            raise LLMBudgetExceeded(
                f"budget of {b.max_tokens} tokens per question reached before stage '{stage}'",
                stage=stage,
            )
        t0 = time.perf_counter()
        self._in_flight += 1
        try:
            sample = opts.get("sample", 0)
            with call_span("llm", stage=stage, model=self.model or "", sample=sample):
                c = await self.inner.complete(messages, **opts)
        except Exception as e:
            log.debug("%s: failed after %.3f s: %s", stage, time.perf_counter() - t0, e)
            raise
        finally:
            self._in_flight -= 1
        latency = time.perf_counter() - t0
        paper = not (self._step_open and self._step_counted)
        self._step_counted = self._step_counted or self._step_open
        self.ledger.record(stage, c, latency, paper)
        log.debug(
            "%s: %d+%d tokens in %.3f s%s", stage, c.usage.prompt_tokens,
            c.usage.completion_tokens, latency, " (cache hit)" if c.cached else "",
        )  # fmt: skip
        return c


def paper_step(llm: ChatLLM, stage: str) -> AbstractContextManager[None]:
    """`llm.step(stage)` when `llm` is metered; nothing otherwise (a bare test double)."""
    return llm.step(stage) if isinstance(llm, MeteredLLM) else nullcontext()


P = ParamSpec("P")
R = TypeVar("R")


def one_paper_call(
    fn: Callable[Concatenate[ChatLLM, str, P], Awaitable[R]],
) -> Callable[Concatenate[ChatLLM, str, P], Awaitable[R]]:
    """Decorates an async `fn(llm, stage, ...)` whose requests form one reasoning step."""

    @functools.wraps(fn)
    async def wrapper(llm: ChatLLM, stage: str, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with paper_step(llm, stage):
            return await fn(llm, stage, *args, **kwargs)

    return wrapper
