"""A cap on concurrent in-flight LLM calls.

Placed outside the retry layer, a slot stays held while a call backs off, so a rate-limited
server sees fewer concurrent requests instead of every waiting task hammering it at once.
"""

from __future__ import annotations

import asyncio
from typing import Unpack

from kgreason.llm.base import CallOptions, ChatLLM, Completion, Message


class ConcurrencyLimitedLLM:
    def __init__(self, inner: ChatLLM, limit: int):
        if limit < 1:
            raise ValueError("concurrency limit must be at least 1")
        self.inner = inner
        self.model = inner.model
        self.limit = limit
        # asyncio primitives belong to one event loop; keep one per loop so a stack can be
        # reused by successive `asyncio.run` calls (CLI commands, tests).
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._loop is not loop:
            self._sem, self._loop = asyncio.Semaphore(self.limit), loop
        return self._sem

    async def complete(self, messages: list[Message], **opts: Unpack[CallOptions]) -> Completion:
        async with self._semaphore():
            return await self.inner.complete(messages, **opts)
