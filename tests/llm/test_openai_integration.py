"""The real OpenAIChat + RetryingLLM stack against a local OpenAI-protocol HTTP server."""

from __future__ import annotations

import socket

import pytest

from kgreason.llm import LLMMalformedResponse, LLMTransportError, OpenAIChat, RetryingLLM

pytestmark = pytest.mark.integration

MSGS = [{"role": "user", "content": "Which river flows through Paris?"}]


def stack(server, *, timeout_s: float = 5.0, attempts: int = 3):
    adapter = OpenAIChat("test-model", server.base_url, "sk-test", timeout_s)
    return adapter, RetryingLLM(adapter, max_attempts=attempts, base_s=0.01, cap_s=0.02)


async def test_success_sends_request_and_reads_usage(openai_server):
    openai_server.plan = [("ok", "The Seine.")]
    adapter, llm = stack(openai_server)
    c = await llm.complete(MSGS, stage="t", temperature=0.4, max_tokens=17)
    await adapter.aclose()
    assert c.text == "The Seine."
    assert (c.usage.prompt_tokens, c.usage.completion_tokens, c.usage.estimated) == (11, 2, False)
    assert c.model == "fake-model" and c.latency_s > 0
    (req,) = openai_server.requests
    assert req["model"] == "test-model" and req["messages"] == MSGS
    assert req["temperature"] == 0.4 and req["max_tokens"] == 17


@pytest.mark.parametrize("code", [429, 500, 503])
async def test_transient_status_then_success(openai_server, code):
    openai_server.plan = [("status", code), ("ok", "The Seine.")]
    adapter, llm = stack(openai_server)
    c = await llm.complete(MSGS, stage="t")
    await adapter.aclose()
    assert c.text == "The Seine."
    assert len(openai_server.requests) == 2  # the SDK's own retries are off: exactly one retry


async def test_client_error_is_not_retried_and_names_endpoint(openai_server):
    openai_server.plan = [("status", 401), ("ok", "never")]
    adapter, llm = stack(openai_server)
    with pytest.raises(LLMTransportError) as e:
        await llm.complete(MSGS, stage="t")
    await adapter.aclose()
    assert not e.value.retryable
    assert "401" in str(e.value) and openai_server.base_url in str(e.value)
    assert len(openai_server.requests) == 1


async def test_persistent_500_gives_up_after_max_attempts(openai_server):
    openai_server.plan = [("status", 500)] * 3
    adapter, llm = stack(openai_server, attempts=3)
    with pytest.raises(LLMTransportError, match="gave up after 3 attempts") as e:
        await llm.complete(MSGS, stage="t")
    await adapter.aclose()
    assert e.value.endpoint == f"{openai_server.base_url}/chat/completions"
    assert len(openai_server.requests) == 3


async def test_timeout_is_retried(openai_server):
    openai_server.plan = [("sleep", 2.0), ("ok", "The Seine.")]
    adapter, llm = stack(openai_server, timeout_s=0.3)
    c = await llm.complete(MSGS, stage="t")
    await adapter.aclose()
    assert c.text == "The Seine."
    assert len(openai_server.requests) == 2


async def test_timeout_error_is_typed_and_retryable(openai_server):
    openai_server.plan = [("sleep", 2.0)]
    adapter = OpenAIChat("m", openai_server.base_url, None, timeout_s=0.3)
    with pytest.raises(LLMTransportError, match="timed out") as e:
        await adapter.complete(MSGS, stage="t")
    await adapter.aclose()
    assert e.value.retryable and openai_server.base_url in str(e.value)


@pytest.mark.parametrize(
    "body",
    [b"<html>proxy error</html>", b"{not json", b"[1, 2]", b'{"id": "x"}', b'{"choices": [{}]}'],
)
async def test_malformed_body_is_typed_and_names_endpoint(openai_server, body):
    openai_server.plan = [("raw", body), ("ok", "never")]
    adapter, llm = stack(openai_server)
    with pytest.raises(LLMMalformedResponse) as e:
        await llm.complete(MSGS, stage="t")
    await adapter.aclose()
    assert openai_server.base_url in str(e.value) and "malformed" in str(e.value)
    assert len(openai_server.requests) == 1  # not retried


async def test_missing_usage_is_estimated_with_offline_tokenizer(openai_server):
    openai_server.plan = [("ok_no_usage", "The Seine flows through Paris.")]
    adapter, llm = stack(openai_server)
    c = await llm.complete(MSGS, stage="t")
    await adapter.aclose()
    assert c.usage.estimated
    # cl100k_base: 7 content tokens + 3 framing + 3 reply priming; reply is 7 tokens
    assert c.usage.prompt_tokens == adapter.tokens.count_text(MSGS[0]["content"]) + 6
    assert c.usage.completion_tokens == 7


async def test_connection_refused_is_retryable_and_names_url():
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    adapter = OpenAIChat("m", url, None, timeout_s=2.0)
    with pytest.raises(LLMTransportError) as e:
        await adapter.complete(MSGS, stage="t")
    await adapter.aclose()
    assert e.value.retryable and url in str(e.value) and "connection failed" in str(e.value)


@pytest.mark.parametrize("kind", ["drop", "truncate"])
async def test_dropped_connection_is_retried(openai_server, kind):
    openai_server.plan = [(kind, None), ("ok", "The Seine.")]
    adapter, llm = stack(openai_server)
    c = await llm.complete(MSGS, stage="t")
    await adapter.aclose()
    assert c.text == "The Seine."
    assert len(openai_server.requests) == 2
