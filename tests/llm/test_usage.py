from __future__ import annotations

import asyncio

import pytest

from kgreason.llm import Budget, CachedLLM, LLMBudgetExceeded, MeteredLLM, UsageLedger
from kgreason.llm.testing import ScriptedLLM

MSGS = [{"role": "user", "content": "one two three"}]  # ScriptedLLM counts words: 3


async def test_totals_per_stage(tmp_path):
    inner = ScriptedLLM({"explore": lambda m: "a b", "answer": ["x", "y z w"]})
    ledger = UsageLedger()
    llm = MeteredLLM(CachedLLM(inner, tmp_path / "c.sqlite"), ledger)
    await llm.complete(MSGS, stage="explore", temperature=0.4, sample=0)
    await llm.complete(MSGS, stage="explore", temperature=0.4, sample=1)
    await llm.complete(MSGS, stage="explore", temperature=0.4, sample=0)  # cache hit
    await llm.complete(MSGS, stage="answer")
    await llm.complete([*MSGS, {"role": "user", "content": "again"}], stage="answer")
    d = ledger.to_dict()
    assert d["explore"]["calls"] == 3 and d["explore"]["cache_hits"] == 1
    assert d["explore"]["prompt_tokens"] == 9 and d["explore"]["completion_tokens"] == 6
    assert d["answer"]["calls"] == 2 and d["answer"]["cache_hits"] == 0
    assert d["answer"]["prompt_tokens"] == 3 + 4 and d["answer"]["completion_tokens"] == 1 + 3
    assert d["total"]["calls"] == 5 and d["total"]["completion_tokens"] == 10
    assert d["total"]["latency_s"] >= 0


async def test_call_budget_stops_before_the_call():
    inner = ScriptedLLM({"*": lambda m: "ok"})
    llm = MeteredLLM(inner, UsageLedger(), Budget(max_calls=2))
    await llm.complete(MSGS, stage="a")
    await llm.complete(MSGS, stage="a")
    with pytest.raises(LLMBudgetExceeded, match="2 LLM calls") as e:
        await llm.complete(MSGS, stage="b")
    assert e.value.stage == "b"
    assert len(inner.calls) == 2  # the refused call never reached the model


async def test_token_budget_stops_the_call_after_the_overrun():
    inner = ScriptedLLM({"*": lambda m: "w " * 5})
    ledger = UsageLedger()
    llm = MeteredLLM(inner, ledger, Budget(max_tokens=10))
    await llm.complete(MSGS, stage="a")  # 3 + 5 = 8
    await llm.complete(MSGS, stage="a")  # 16: over, but recorded
    with pytest.raises(LLMBudgetExceeded, match="10 tokens"):
        await llm.complete(MSGS, stage="a")
    assert ledger.total().calls == 2 and ledger.total().prompt_tokens == 6


async def test_call_budget_holds_under_concurrency():
    class Slow(ScriptedLLM):
        async def complete(self, *a, **kw):
            await asyncio.sleep(0.01)
            return await super().complete(*a, **kw)

    inner = Slow({"*": lambda m: "ok"})
    llm = MeteredLLM(inner, UsageLedger(), Budget(max_calls=3))
    results = await asyncio.gather(
        *(llm.complete(MSGS, stage="s", sample=i) for i in range(6)), return_exceptions=True
    )
    assert sum(not isinstance(r, Exception) for r in results) == 3
    assert sum(isinstance(r, LLMBudgetExceeded) for r in results) == 3
    assert len(inner.calls) == 3


async def test_separate_ledgers_per_question_share_one_stack():
    shared = ScriptedLLM({"*": lambda m: "ok"})
    q1, q2 = UsageLedger(), UsageLedger()
    await MeteredLLM(shared, q1).complete(MSGS, stage="s")
    for _ in range(2):
        await MeteredLLM(shared, q2).complete(MSGS, stage="s")
    assert q1.total().calls == 1 and q2.total().calls == 2
