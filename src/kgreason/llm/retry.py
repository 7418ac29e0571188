"""Retries with the shared backoff policy (`kgreason.backoff`), full jitter.

Only `LLMTransportError`s flagged `retryable` (429, 5xx, timeouts, dropped connections) are
retried; a 400 or a malformed body would fail the same way again. A server's Retry-After hint
is a floor, still capped. `sleep` and `rng` are injected so tests run on a fake clock.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Unpack

from kgreason.backoff import Backoff
from kgreason.llm.base import CallOptions, ChatLLM, Completion, LLMTransportError, Message

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]


class RetryingLLM:
    def __init__(
        self,
        inner: ChatLLM,
        *,
        max_attempts: int = 7,
        base_s: float = 1.0,
        cap_s: float = 30.0,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.inner = inner
        self.model = inner.model
        self.max_attempts = max_attempts
        self.backoff = Backoff(max_attempts - 1, base_s, cap_s, "full", rng or random.Random())
        self._sleep = sleep

    @property
    def base_s(self) -> float:
        return self.backoff.base_s

    @property
    def cap_s(self) -> float:
        return self.backoff.cap_s

    def delay(self, retry: int, hint: float | None = None) -> float:
        """Delay before retry number `retry` (0-based)."""
        return self.backoff.delay(retry, hint)

    async def complete(self, messages: list[Message], **opts: Unpack[CallOptions]) -> Completion:
        for attempt in range(self.max_attempts):
            try:
                return await self.inner.complete(messages, **opts)
            except LLMTransportError as e:
                if not e.retryable:
                    raise
                if attempt + 1 >= self.max_attempts:
                    raise LLMTransportError(
                        f"{e} (gave up after {self.max_attempts} attempts)",
                        endpoint=e.endpoint,
                        retryable=False,
                    ) from e
                d = self.delay(attempt, e.retry_after_s)
                log.info("stage %s: %s; retry %d in %.2fs", opts["stage"], e, attempt + 1, d)
                await self._sleep(d)
        raise AssertionError("unreachable")  # pragma: no cover
