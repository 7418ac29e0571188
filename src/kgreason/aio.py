"""Sync entry points that also work inside a running event loop (Jupyter, an async app).

`asyncio.run` refuses to start a loop from a thread that already runs one, which is
exactly where notebooks call `PoG.ask`. There the coroutine runs to completion on a fresh
loop in a worker thread while the caller waits: the call blocks like any sync call, and
the caller's loop is not re-entered (no nest_asyncio patching). Clients bound to an event
loop (httpx in the LLM adapter and the SPARQL client) are remade for the new loop."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def in_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _Box(Generic[T]):
    """Holds a coroutine's result behind a constant repr. CPython 3.11's `asyncio.run`
    formats the main task (result included) while checking its SIGINT handler, so a result
    holding thousands of lazily named paths would be rendered, names decoded, for nothing."""

    __slots__ = ("value",)

    def __init__(self, value: T):
        self.value = value

    def __repr__(self) -> str:
        return "<result>"


async def _boxed(coro: Coroutine[Any, Any, T]) -> _Box[T]:
    return _Box(await coro)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion and return its result, from sync code or from inside a
    running loop (then on a worker thread's own loop; context variables are carried)."""
    if not in_running_loop():
        return asyncio.run(_boxed(coro)).value
    ctx = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgreason-sync") as pool:
        return pool.submit(ctx.run, asyncio.run, _boxed(coro)).result().value
