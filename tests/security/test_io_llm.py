"""Hostile or broken LLM endpoints: huge, trickling, garbage and rejecting replies, and the
cache under faults. Servers are real HTTP servers on 127.0.0.1 (tests/llm/fake_server.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgreason.eval.runner import classify_error
from kgreason.llm import CachedLLM, OpenAIChat, RetryingLLM
from kgreason.llm.base import (
    Completion,
    LLMBadReply,
    LLMRejected,
    LLMTooLarge,
    LLMTransportError,
    Usage,
)
from kgreason.llm.testing import ScriptedLLM
from kgreason.llm.tokens import TokenCounter
from kgreason.pog.pipeline import error_kind
from tests.llm.fake_server import FakeOpenAIServer

MSGS = [{"role": "user", "content": "Which river flows through Paris?"}]
MiB = 1024 * 1024


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    s = FakeOpenAIServer().start()
    try:
        yield s
    finally:
        s.close()


async def _call(server: FakeOpenAIServer, **kw) -> Completion:
    adapter = OpenAIChat("m", server.base_url, "k", **{"timeout_s": 10.0, **kw})
    try:
        return await adapter.complete(MSGS, stage="t")
    finally:
        await adapter.aclose()


async def test_huge_streamed_reply_stops_at_the_cap(server):
    server.plan = [("huge", 300 * MiB)]
    with pytest.raises(LLMTooLarge) as e:
        await _call(server, max_reply_bytes=1 * MiB)
    assert "1 MiB cap (llm.max_reply_bytes)" in str(e.value)
    assert server.base_url in str(e.value)
    assert not e.value.retryable
    assert error_kind(e.value) == classify_error(e.value) == "llm-too-large"
    server.close()  # wait for the handler to record what it sent
    assert server.sent and server.sent[0] < 300 * MiB  # the client hung up early


async def test_huge_declared_reply_is_refused_before_reading(server):
    server.plan = [("huge_declared", 300 * MiB)]
    with pytest.raises(LLMTooLarge, match=r"Content-Length 314,572,800"):
        await _call(server, max_reply_bytes=1 * MiB)


async def test_default_cap_admits_a_normal_reply(server):
    server.plan = [("huge", 200_000)]
    c = await _call(server)
    assert len(c.text) > 190_000 and c.usage.estimated


async def test_trickling_reply_hits_the_total_deadline(server):
    """A server sending one byte per 50 ms never trips a per-read timeout; the total one
    holds. (No timing assertion: the server records that the client hung up early.)"""
    server.plan = [("trickle", 30.0)]
    with pytest.raises(LLMTransportError, match=r"timed out after 0.5s") as e:
        await _call(server, timeout_s=0.5)
    assert "still arriving" in str(e.value)
    assert not e.value.retryable  # a trickling server would trickle again
    assert error_kind(e.value) == "llm-unreachable"
    server.close()
    assert server.sent and server.sent[0] < 150  # the body is ~260 bytes


@pytest.mark.parametrize("body", [b"\x00\xff garbage", b"{not json", b"[1]", b'{"choices": 3}'])
async def test_garbage_is_a_bad_reply_not_unreachable(server, body):
    server.plan = [("raw", body), ("ok", "never")]
    adapter = OpenAIChat("m", server.base_url, "k", 5.0)
    llm = RetryingLLM(adapter, max_attempts=3, base_s=0.01, cap_s=0.02)
    with pytest.raises(LLMBadReply) as e:
        await llm.complete(MSGS, stage="t")
    await adapter.aclose()
    assert error_kind(e.value) == classify_error(e.value) == "llm-bad-reply"
    assert len(server.requests) == 1


@pytest.mark.parametrize("code", [400, 401, 404, 422])
async def test_4xx_is_rejected_and_not_retried(server, code):
    server.plan = [("status", code), ("ok", "never")]
    adapter = OpenAIChat("m", server.base_url, "k", 5.0)
    llm = RetryingLLM(adapter, max_attempts=3, base_s=0.01, cap_s=0.02)
    with pytest.raises(LLMRejected, match=rf"rejected the request with HTTP {code}") as e:
        await llm.complete(MSGS, stage="t")
    await adapter.aclose()
    assert error_kind(e.value) == classify_error(e.value) == "llm-rejected"
    assert len(server.requests) == 1


@pytest.mark.parametrize("code", [408, 429, 500, 503])
async def test_retryable_statuses_end_as_unreachable(server, code):
    server.plan = [("status", code)] * 2
    adapter = OpenAIChat("m", server.base_url, "k", 5.0)
    llm = RetryingLLM(adapter, max_attempts=2, base_s=0.01, cap_s=0.02)
    with pytest.raises(LLMTransportError, match="gave up after 2 attempts") as e:
        await llm.complete(MSGS, stage="t")
    await adapter.aclose()
    assert error_kind(e.value) == "llm-unreachable"


def test_token_counting_of_a_long_text_is_piecewise_and_close():
    tc = TokenCounter()
    text = ("The Seine flows through Paris and into the sea. " * 6000).strip()  # ~300 kB
    exact = len(tc.encoding.encode(text, disallowed_special=()))
    assert abs(tc.count_text(text) - exact) <= len(text) // 65536 + 1
    assert tc.count_text("x" * 200_000) > 0  # no whitespace to cut at: hard cuts


def _completion(text: str) -> Completion:
    return Completion(text, Usage(1, 1), model="m")


async def test_cache_key_includes_the_endpoint(tmp_path: Path):
    path = tmp_path / "c.sqlite"
    a = CachedLLM(ScriptedLLM({"t": ["from A"]}), path, endpoint="http://a/v1")
    assert (await a.complete(MSGS, stage="t")).text == "from A"
    a.close()
    b = CachedLLM(ScriptedLLM({"t": ["from B"]}), path, endpoint="http://b/v1")
    c = await b.complete(MSGS, stage="t")
    assert (c.text, c.cached) == ("from B", False)
    b.close()


async def test_corrupt_cache_file_is_set_aside_and_rebuilt(tmp_path: Path, caplog):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    cache = CachedLLM(ScriptedLLM({"t": ["one", "two"]}), path, endpoint="e")
    assert (await cache.complete(MSGS, stage="t")).text == "one"
    assert (await cache.complete(MSGS, stage="t")).cached  # the fresh cache works
    cache.close()
    (aside,) = tmp_path.glob("c.sqlite.corrupt-*")
    assert aside.read_bytes().startswith(b"this is not a database")
    assert "not a SQLite database" in caplog.text and str(path) in caplog.text


async def test_unusable_cache_is_bypassed_with_a_warning(tmp_path: Path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = CachedLLM(ScriptedLLM({"t": ["one", "two"]}), blocker / "c.sqlite", endpoint="e")
    assert (await cache.complete(MSGS, stage="t")).text == "one"
    assert (await cache.complete(MSGS, stage="t")).text == "two"  # no cache: asked again
    assert cache.disabled and "continuing without the cache" in caplog.text


async def test_cache_broken_mid_run_is_bypassed(tmp_path: Path, monkeypatch):
    cache = CachedLLM(ScriptedLLM({"t": ["one", "two"]}), tmp_path / "c.sqlite", endpoint="e")
    await cache.complete(MSGS, stage="t")

    def full(*a, **k):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(cache, "_db", full)
    assert (await cache.complete(MSGS, stage="t", sample=1)).text == "two"
    assert cache.disabled and "disk is full" in cache.disabled
