from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgreason.llm import (
    CachedLLM,
    ConcurrencyLimitedLLM,
    LLMNotConfigured,
    OpenAIChat,
    RecordingLLM,
    ReplayLLM,
    RetryingLLM,
    build_llm,
    llm_configured,
)
from kgreason.llm.settings import LLMSettings


def layers(llm) -> list[type]:
    out = []
    while llm is not None:
        out.append(type(llm))
        llm = getattr(llm, "inner", None)
    return out


def test_configured_iff_url_or_key():
    assert not llm_configured(LLMSettings())
    assert llm_configured(LLMSettings(base_url="http://127.0.0.1:1/v1"))
    assert llm_configured(LLMSettings(api_key="sk-x"))


def test_not_configured_raises_with_hint():
    with pytest.raises(LLMNotConfigured, match="OPENAI_BASE_URL"):
        build_llm(LLMSettings())


def test_stack_order_and_settings(tmp_path: Path):
    s = LLMSettings(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        max_retries=2,
        backoff_base_s=0.1,
        backoff_cap_s=0.5,
        concurrency=3,
        cache_path=tmp_path / "c.sqlite",
        timeout_s=4.0,
    )
    llm = build_llm(s, transcript=tmp_path / "t.jsonl")
    assert layers(llm) == [RecordingLLM, CachedLLM, ConcurrencyLimitedLLM, RetryingLLM, OpenAIChat]
    assert llm.model == "m"
    retry = llm.inner.inner.inner
    assert (retry.max_attempts, retry.base_s, retry.cap_s) == (3, 0.1, 0.5)
    assert llm.inner.inner.limit == 3
    assert retry.inner.endpoint == "http://127.0.0.1:9/v1/chat/completions"
    assert retry.inner.timeout_s == 4.0


def test_cache_bypass(tmp_path: Path):
    s = LLMSettings(api_key="sk-x", cache_path=tmp_path / "c.sqlite")
    assert CachedLLM in layers(build_llm(s))
    assert CachedLLM not in layers(build_llm(s, cache=False))
    assert CachedLLM not in layers(build_llm(s.model_copy(update={"cache": False})))
    assert CachedLLM in layers(build_llm(s.model_copy(update={"cache": False}), cache=True))
    assert not (tmp_path / "c.sqlite").exists()  # nothing touched until the first call


async def test_replay_needs_no_endpoint(tmp_path: Path):
    t = tmp_path / "t.jsonl"
    rec = {
        "stage": "s",
        "request": {
            "messages": [{"role": "user", "content": "q"}],
            "temperature": 0.0,
            "max_tokens": 256,
            "sample": 0,
            "model": "gpt-x",
        },
        "response": {"text": "a"},
        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
    }
    t.write_text(json.dumps(rec) + "\n")
    llm = build_llm(LLMSettings(), replay=t)
    assert layers(llm) == [ReplayLLM]
    c = await llm.complete([{"role": "user", "content": "q"}], stage="s")
    assert c.text == "a" and c.model == "gpt-x"
    with pytest.raises(Exception, match="being replayed"):
        build_llm(LLMSettings(), replay=t, transcript=t)
