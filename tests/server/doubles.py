"""Test doubles for the server tests: an LLM whose calls wait on a gate, so a slow question
is deterministic (it is as slow as the test says, not as slow as the machine happens to be)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from kgreason.llm.base import LLMOutputError


class GatedLLM:
    """Every call waits until `release()`, then fails as an unreadable reply (the question
    ends with a named error: a completed request, not a crash). `entered` (a threading
    Event) is set when a call starts, so a test on another thread knows a question is in
    flight. `release` may be called from any thread."""

    model = "gated"

    def __init__(self) -> None:
        self.calls = 0
        self.entered = threading.Event()
        self._released = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            self._released.set()
            waiters, self._waiters = self._waiters, []
        for loop, fut in waiters:
            if loop.is_closed() or fut.done():  # cancelled by a deadline, loop gone
                continue
            loop.call_soon_threadsafe(lambda f=fut: f.done() or f.set_result(None))

    async def complete(self, messages: list[Any], **opts: Any) -> Any:
        self.calls += 1
        self.entered.set()
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if not self._released.is_set():
                self._waiters.append((loop, fut))
            else:
                fut.set_result(None)
        await fut
        stage = str(opts.get("stage", ""))
        raise LLMOutputError(f"gated double: no reply for stage {stage!r}", stage=stage)


class BlockingKG:
    """A KG whose `expand` blocks its thread (as a long CPU-bound stage does) until
    `release()`; everything else is the wrapped KG's. `entered` is set when it blocks."""

    def __init__(self, inner: Any):
        self._inner = inner
        self.entered = threading.Event()
        self._released = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def release(self) -> None:
        self._released.set()

    async def expand(self, *args: Any, **kwargs: Any) -> Any:
        self.entered.set()
        assert self._released.wait(60), "BlockingKG was never released"
        return await self._inner.expand(*args, **kwargs)
