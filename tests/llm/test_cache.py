from __future__ import annotations

from pathlib import Path

from kgreason.llm import CachedLLM, Usage
from kgreason.llm.testing import ScriptedLLM

MSGS = [{"role": "user", "content": "q"}]


def counting_llm() -> ScriptedLLM:
    n = {"i": 0}

    def reply(_messages):
        n["i"] += 1
        return f"reply {n['i']}"

    return ScriptedLLM({"*": reply}, model="m1")


async def test_miss_then_hit(tmp_path: Path):
    inner = counting_llm()
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    first = await llm.complete(MSGS, stage="s", temperature=0.4)
    second = await llm.complete(MSGS, stage="other-stage", temperature=0.4)
    assert (first.text, first.cached) == ("reply 1", False)
    assert (second.text, second.cached) == ("reply 1", True)
    assert second.usage == first.usage and second.model == first.model
    assert len(inner.calls) == 1


async def test_persists_across_instances(tmp_path: Path):
    path = tmp_path / "sub" / "c.sqlite"
    a = CachedLLM(counting_llm(), path)
    await a.complete(MSGS, stage="s")
    a.close()
    inner = counting_llm()
    b = CachedLLM(inner, path)
    c = await b.complete(MSGS, stage="s")
    assert c.cached and c.text == "reply 1" and inner.calls == []


async def test_every_request_field_is_in_the_key(tmp_path: Path):
    inner = counting_llm()
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    base = {"stage": "s", "temperature": 0.4, "max_tokens": 256, "sample": 0}
    await llm.complete(MSGS, **base)
    variants = [
        (MSGS, {**base, "sample": 1}),
        (MSGS, {**base, "temperature": 0.0}),
        (MSGS, {**base, "max_tokens": 100}),
        ([*MSGS, {"role": "user", "content": "repair"}], base),
    ]
    for msgs, kw in variants:
        c = await llm.complete(msgs, **kw)
        assert not c.cached
    assert len(inner.calls) == 1 + len(variants)
    assert len(llm) == 1 + len(variants)
    other_model = counting_llm()
    other_model.model = "m2"
    c = await CachedLLM(other_model, tmp_path / "c.sqlite").complete(MSGS, **base)
    assert not c.cached


async def test_int_and_float_temperature_are_one_key(tmp_path: Path):
    llm = CachedLLM(counting_llm(), tmp_path / "c.sqlite")
    assert llm.key(MSGS, 0, 256, 0) == llm.key(MSGS, 0.0, 256, 0)
    assert llm.key(MSGS, 0.0, 256, 0) != llm.key(MSGS, 0.0, 256, 1)


async def test_estimated_usage_round_trips(tmp_path: Path):
    llm = CachedLLM(counting_llm(), tmp_path / "c.sqlite")
    key = llm.key(MSGS, 0.0, 256, 0)
    from kgreason.llm import Completion

    llm.put(key, Completion("x", Usage(5, 1, estimated=True), model="m1"))
    c = await llm.complete(MSGS, stage="s")
    assert c.cached and c.usage == Usage(5, 1, estimated=True)
