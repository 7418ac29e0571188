from __future__ import annotations

import random

import pytest

from kgreason.llm import Completion, LLMTransportError, RetryingLLM

MSGS = [{"role": "user", "content": "q"}]


class Flaky:
    """Fails with the given errors, in order, then answers."""

    model = "flaky"

    def __init__(self, errors: list[Exception]):
        self.errors = list(errors)
        self.calls = 0

    async def complete(self, messages, *, stage, temperature=0.0, max_tokens=256, sample=0):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return Completion("ok")


class FakeClock:
    def __init__(self) -> None:
        self.sleeps: list[float] = []

    async def sleep(self, s: float) -> None:
        self.sleeps.append(s)


class MaxRng(random.Random):
    """Always draws the top of the jitter interval, exposing the un-jittered bound."""

    def uniform(self, a: float, b: float) -> float:
        return b


def transient(n: int, **kw) -> list[Exception]:
    return [LLMTransportError("503", endpoint="http://x", retryable=True, **kw) for _ in range(n)]


async def test_bounds_grow_exponentially_then_cap():
    clock = FakeClock()
    inner = Flaky(transient(6))
    llm = RetryingLLM(inner, max_attempts=7, base_s=0.5, cap_s=5.0, sleep=clock.sleep, rng=MaxRng())
    assert (await llm.complete(MSGS, stage="s")).text == "ok"
    assert clock.sleeps == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert inner.calls == 7


async def test_full_jitter_stays_within_bounds_and_varies():
    clock = FakeClock()
    llm = RetryingLLM(
        Flaky(transient(6)),
        max_attempts=7,
        base_s=0.5,
        cap_s=5.0,
        sleep=clock.sleep,
        rng=random.Random(7),
    )
    await llm.complete(MSGS, stage="s")
    bounds = [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert all(0.0 <= d <= b for d, b in zip(clock.sleeps, bounds, strict=True))
    assert any(d < b * 0.95 for d, b in zip(clock.sleeps, bounds, strict=True))
    # same seed, same schedule: runs are reproducible when the rng is injected
    clock2 = FakeClock()
    llm2 = RetryingLLM(
        Flaky(transient(6)),
        max_attempts=7,
        base_s=0.5,
        cap_s=5.0,
        sleep=clock2.sleep,
        rng=random.Random(7),
    )
    await llm2.complete(MSGS, stage="s")
    assert clock2.sleeps == clock.sleeps


async def test_gives_up_after_max_attempts():
    clock = FakeClock()
    inner = Flaky(transient(10))
    llm = RetryingLLM(inner, max_attempts=4, base_s=0.1, cap_s=1.0, sleep=clock.sleep)
    with pytest.raises(LLMTransportError, match="gave up after 4 attempts") as e:
        await llm.complete(MSGS, stage="s")
    assert inner.calls == 4 and len(clock.sleeps) == 3
    assert e.value.endpoint == "http://x" and not e.value.retryable
    assert isinstance(e.value.__cause__, LLMTransportError)


@pytest.mark.parametrize(
    "err",
    [LLMTransportError("400 bad request", retryable=False), ValueError("a bug, not the network")],
)
async def test_non_retryable_errors_pass_through_at_once(err):
    clock = FakeClock()
    inner = Flaky([err])
    llm = RetryingLLM(inner, max_attempts=5, sleep=clock.sleep)
    with pytest.raises(type(err)) as e:
        await llm.complete(MSGS, stage="s")
    assert e.value is err and inner.calls == 1 and clock.sleeps == []


async def test_retry_after_hint_is_a_capped_floor():
    clock = FakeClock()
    rng = random.Random(0)
    rng.uniform = lambda a, b: 0.0  # type: ignore[method-assign]
    inner = Flaky(transient(1, retry_after_s=2.5) + transient(1, retry_after_s=60.0))
    llm = RetryingLLM(inner, max_attempts=3, base_s=0.1, cap_s=10.0, sleep=clock.sleep, rng=rng)
    await llm.complete(MSGS, stage="s")
    assert clock.sleeps == [2.5, 10.0]


def test_rejects_zero_attempts():
    with pytest.raises(ValueError):
        RetryingLLM(Flaky([]), max_attempts=0)
