"""Adapter for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

The SDK's own retries are disabled (`max_retries=0`): `RetryingLLM` owns the retry policy so
it is the same for every backend and testable with a fake clock. Every failure becomes an
`LLMTransportError` naming the endpoint, flagged retryable for 429, 408, 5xx, timeouts and
dropped connections. The body is parsed here rather than by the SDK's lenient model, because
compatible servers vary and a half-formed reply must fail loudly, not read as empty.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

from kgreason.llm.base import Completion, LLMTransportError, Message, Usage
from kgreason.llm.tokens import TokenCounter

if TYPE_CHECKING:
    import openai

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Sent when no key is configured: local servers ignore it, but the SDK insists on one.
PLACEHOLDER_KEY = "no-key"


class LLMMalformedResponse(LLMTransportError):
    """The endpoint answered 2xx but the body is not an OpenAI chat completion."""


def _retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


def _retry_after(headers: Any) -> float | None:
    try:
        value = headers.get("retry-after")
        return max(0.0, float(value)) if value is not None else None
    except (TypeError, ValueError):  # HTTP-date form: leave it to the backoff schedule
        return None


class OpenAIChat:
    """`ChatLLM` over `openai.AsyncOpenAI`. One client per event loop (httpx pools are
    loop-bound), created on first use; call `aclose()` when done."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        *,
        tokens: TokenCounter | None = None,
    ):
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.endpoint = f"{self.base_url}/chat/completions"
        self._api_key = api_key or PLACEHOLDER_KEY
        self.timeout_s = timeout_s
        self.tokens = tokens or TokenCounter()
        self._client: openai.AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _get_client(self) -> openai.AsyncOpenAI:
        import openai

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                timeout=self.timeout_s,
                max_retries=0,
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _err(
        self, what: str, *, retryable: bool, retry_after: float | None = None
    ) -> LLMTransportError:
        return LLMTransportError(
            f"{self.endpoint}: {what}",
            endpoint=self.endpoint,
            retryable=retryable,
            retry_after_s=retry_after,
        )

    def _malformed(self, what: str) -> LLMMalformedResponse:
        return LLMMalformedResponse(
            f"{self.endpoint}: malformed response: {what}", endpoint=self.endpoint
        )

    async def complete(
        self,
        messages: list[Message],
        *,
        stage: str,
        temperature: float = 0.0,
        max_tokens: int | None = 256,
        sample: int = 0,
    ) -> Completion:
        # `stage` and `sample` only matter to the layers above (accounting, cache keys).
        import openai  # deferred: ~0.35 s to import, and most CLI commands never call an LLM

        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": temperature,
        }
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        t0 = time.perf_counter()
        try:
            raw = await self._get_client().chat.completions.with_raw_response.create(**kwargs)
            body_text = raw.http_response.text
        except openai.APITimeoutError:
            raise self._err(f"timed out after {self.timeout_s:g}s", retryable=True) from None
        except openai.APIConnectionError as e:
            cause = e.__cause__ or e
            raise self._err(f"connection failed: {cause}", retryable=True) from e
        except openai.APIStatusError as e:
            status = e.status_code
            detail = e.message if isinstance(e.message, str) else str(e.body)
            raise self._err(
                f"HTTP {status}: {detail[:300]}",
                retryable=_retryable_status(status),
                retry_after=_retry_after(e.response.headers),
            ) from e
        except (openai.APIResponseValidationError, ValueError) as e:
            raise self._malformed(str(e)[:300]) from e
        latency = time.perf_counter() - t0
        text, usage, model = self._parse(body_text, messages)
        return Completion(text, usage, model=model or self.model, latency_s=latency)

    def _parse(self, body_text: str, messages: list[Message]) -> tuple[str, Usage, str]:
        try:
            body = json.loads(body_text)
        except ValueError:
            raise self._malformed(f"body is not JSON: {body_text[:120]!r}") from None
        if not isinstance(body, dict):
            raise self._malformed(f"body is a JSON {type(body).__name__}, not an object")
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._malformed("no 'choices'")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise self._malformed("choices[0] has no 'message'")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise self._malformed("choices[0].message.content is not a string")
        text = content or ""
        model = body.get("model") if isinstance(body.get("model"), str) else ""
        return text, self._usage(body.get("usage"), messages, text), model

    def _usage(self, raw: Any, messages: list[Message], text: str) -> Usage:
        if isinstance(raw, dict):
            p, c = raw.get("prompt_tokens"), raw.get("completion_tokens")
            if isinstance(p, int) and isinstance(c, int):
                return Usage(p, c)
        return Usage(
            self.tokens.count_messages(messages), self.tokens.count_text(text), estimated=True
        )
