from __future__ import annotations

import asyncio

import pytest

from kgreason.llm import Completion, ConcurrencyLimitedLLM

MSGS = [{"role": "user", "content": "q"}]


class Slow:
    model = "slow"

    def __init__(self) -> None:
        self.active = 0
        self.peak = 0

    async def complete(self, messages, *, stage, temperature=0.0, max_tokens=256, sample=0):
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.01)
        self.active -= 1
        return Completion(f"s{sample}")


async def test_never_more_than_limit_in_flight():
    inner = Slow()
    llm = ConcurrencyLimitedLLM(inner, 3)
    out = await asyncio.gather(*(llm.complete(MSGS, stage="s", sample=i) for i in range(12)))
    assert [c.text for c in out] == [f"s{i}" for i in range(12)]
    assert inner.peak == 3


def test_usable_from_successive_event_loops():
    inner = Slow()
    llm = ConcurrencyLimitedLLM(inner, 2)

    async def burst():
        return await asyncio.gather(*(llm.complete(MSGS, stage="s") for _ in range(4)))

    asyncio.run(burst())
    asyncio.run(burst())
    assert inner.peak == 2


def test_rejects_zero():
    with pytest.raises(ValueError):
        ConcurrencyLimitedLLM(Slow(), 0)
