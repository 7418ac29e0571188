from __future__ import annotations

import pytest

from kgreason.llm.testing import ScriptedLLM, UnscriptedCall

MSGS = [{"role": "user", "content": "hello there"}]


async def test_lists_are_consumed_in_order_then_fail_loudly():
    llm = ScriptedLLM({"a": ["one", "two"]})
    assert (await llm.complete(MSGS, stage="a")).text == "one"
    assert (await llm.complete(MSGS, stage="a")).text == "two"
    with pytest.raises(UnscriptedCall, match="called 3 times but only 2"):
        await llm.complete(MSGS, stage="a")


async def test_unscripted_stage_fails_loudly():
    llm = ScriptedLLM({"a": ["one"]})
    with pytest.raises(UnscriptedCall, match="stage 'b'"):
        await llm.complete(MSGS, stage="b")


async def test_function_and_wildcard_and_call_log():
    llm = ScriptedLLM({"echo": lambda m: m[-1]["content"].upper(), "*": ["any"]})
    assert (await llm.complete(MSGS, stage="echo", temperature=0.4, sample=3)).text == "HELLO THERE"
    assert (await llm.complete(MSGS, stage="other")).text == "any"
    assert llm.stages_called() == ["echo", "other"]
    assert (llm.calls[0].temperature, llm.calls[0].sample) == (0.4, 3)


def test_bare_string_script_is_rejected():
    with pytest.raises(TypeError, match="stage 'a'"):
        ScriptedLLM({"a": "one reply"})
