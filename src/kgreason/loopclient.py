"""An httpx.AsyncClient per event loop, closed when that loop shuts down.

The CLI answers each question in its own `asyncio.run`, while the LLM adapter and the SPARQL
client live for the whole command. An httpx pool belongs to one loop, so a new client is
made when the loop changes; the old one can no longer be closed (its loop is gone) and its
sockets leaked. Here each client is paired with an async generator started in its loop:
`asyncio.run` (and pytest-asyncio) finalise a loop's async generators before closing it
(`loop.shutdown_asyncgens`), which runs the generator's `finally` and closes the client
while its loop still runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable

import httpx


async def _close_at_loop_shutdown(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.aclose()


class LoopClient:
    def __init__(self, factory: Callable[[], httpx.AsyncClient]):
        self._factory = factory
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._guard: AsyncGenerator[None, None] | None = None

    async def get(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client, self._loop = self._factory(), loop
            self._guard = _close_at_loop_shutdown(self._client)
            await self._guard.__anext__()  # registers it with this loop's shutdown
        return self._client

    async def aclose(self) -> None:
        client, guard, same = self._client, self._guard, self._loop is _running_loop()
        self._client = self._guard = self._loop = None
        if client is None or not same:  # another loop's client: its shutdown closes it
            return
        if guard is not None:
            with contextlib.suppress(StopAsyncIteration, RuntimeError):
                await guard.aclose()  # runs the finally: closes the client
        await client.aclose()  # idempotent


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
