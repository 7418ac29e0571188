"""Adapter for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

The endpoint is called with httpx directly, streaming the body, not through the `openai`
SDK: the SDK reads a whole reply into memory before we see it, and its timeout is per read,
so a 300 MB reply or a server trickling one byte a second ran unbounded. Here every request
has one deadline (`timeout_s`) around connect + headers + the whole body, and the body is
read chunk by chunk against a byte cap (`max_reply_bytes`).

Retries are not done here: `RetryingLLM` owns the retry policy so it is the same for every
backend and testable with a fake clock. Every failure is an `LLMTransportError` naming the
endpoint, whose class says what happened (`error_kind`): unreachable (connect errors, 408,
429, 5xx, timeouts, dropped connections; retryable, except a timeout while the body is
still arriving: a trickling server would trickle again), rejected (other 4xx), bad reply
(malformed body) or too large. The body is parsed strictly, because compatible servers vary
and a half-formed reply must fail loudly, not read as empty.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import replace
from typing import Any, Unpack

import httpx

from kgreason.llm.base import (
    CallOptions,
    Completion,
    LLMBadReply,
    LLMRejected,
    LLMTooLarge,
    LLMTransportError,
    Message,
    Request,
    Usage,
)
from kgreason.llm.schema import strict_compatible
from kgreason.llm.settings import Mode
from kgreason.llm.structured import (
    Capability,
    flavour_from_models,
    is_openai_host,
    parse_version,
    rejects_schema,
    schema_fields,
    server_root,
)
from kgreason.llm.tokens import TokenCounter
from kgreason.loopclient import LoopClient
from kgreason.version import __version__

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Sent when no key is configured: local servers ignore it, OpenAI itself will say 401.
PLACEHOLDER_KEY = "no-key"
#: 16 MiB: a chat reply is kilobytes; this only stops a broken or hostile server.
DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024
#: How much of an error body is read for the message.
_ERROR_BODY_BYTES = 64 * 1024
#: Capability probes (/models, /version, /api/version): a short deadline and a small body.
_PROBE_TIMEOUT_S = 5.0
_PROBE_BYTES = 1024 * 1024

#: Kept for callers that catch the old name.
LLMMalformedResponse = LLMBadReply


def _retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


def _retry_after(headers: httpx.Headers) -> float | None:
    try:
        value = headers.get("retry-after")
        return max(0.0, float(value)) if value is not None else None
    except (TypeError, ValueError):  # HTTP-date form: leave it to the backoff schedule
        return None


def _mib(n: int) -> str:
    return f"{n / 1048576:g} MiB" if n >= 1048576 else f"{n} bytes"


class OpenAIChat:
    """`ChatLLM` over HTTP. One httpx client per event loop (its pool is loop-bound),
    created on first use and closed with its loop; `aclose()` closes it sooner."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        *,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        tokens: TokenCounter | None = None,
        structured_output: Mode = "auto",
        structured_strict: bool = True,
    ):
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.endpoint = f"{self.base_url}/chat/completions"
        self._api_key = api_key or PLACEHOLDER_KEY
        self.timeout_s = timeout_s
        self.max_reply_bytes = max_reply_bytes
        self.tokens = tokens or TokenCounter()
        #: remade per event loop and closed when that loop shuts down (see loopclient.py)
        self._http = LoopClient(lambda: httpx.AsyncClient(timeout=httpx.Timeout(self.timeout_s)))
        self.structured_output: Mode = structured_output
        self.structured_strict = structured_strict
        #: what this endpoint accepts, found on the first call that carries a schema and
        #: kept for the adapter's life (one adapter per endpoint per session)
        self.capability: Capability | None = None
        self._probe_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    async def aclose(self) -> None:
        await self._http.aclose()

    def _err(
        self, what: str, *, retryable: bool, retry_after: float | None = None
    ) -> LLMTransportError:
        return LLMTransportError(
            f"{self.endpoint}: {what}",
            endpoint=self.endpoint,
            retryable=retryable,
            retry_after_s=retry_after,
        )

    def _malformed(self, what: str) -> LLMBadReply:
        return LLMBadReply(f"{self.endpoint}: malformed response: {what}", endpoint=self.endpoint)

    def _too_large(self, size: str) -> LLMTooLarge:
        return LLMTooLarge(
            f"{self.endpoint}: reply larger than the {_mib(self.max_reply_bytes)} cap "
            f"(llm.max_reply_bytes){size}",
            endpoint=self.endpoint,
        )

    async def complete(self, messages: list[Message], **opts: Unpack[CallOptions]) -> Completion:
        # `stage` and `sample` only matter to the layers above (accounting, cache keys).
        r = Request.of(opts)
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": r.temperature,
        }
        if r.max_tokens is not None:
            payload["max_tokens"] = r.max_tokens
        extra: dict[str, Any] = {}
        if r.schema is not None and self.structured_output != "off":
            cap = await self.detect()
            strict = self.structured_strict and strict_compatible(r.schema)
            extra = schema_fields(
                cap.flavour, r.stage, r.schema, strict=strict, vllm_version=cap.vllm_version
            )
        try:
            return await self._send({**payload, **extra}, messages)
        except LLMRejected as e:
            if not extra or not rejects_schema(e.status, e.detail):
                raise
            if self.structured_output != "auto":
                raise LLMRejected(
                    f"{e} (llm.structured_output = {self.structured_output!r}: the server "
                    'refused the schema; set it to "auto" or "off")',
                    endpoint=self.endpoint,
                ) from None
            self.capability = Capability(
                "off", f"the server refused {sorted(extra)} with HTTP {e.status}: {e.detail[:120]}"
            )
            log.warning(
                "%s does not accept structured outputs (%s); plain prompting from now on",
                self.endpoint, self.capability.how,
            )  # fmt: skip
            return await self._send(payload, messages)

    async def _send(self, payload: dict[str, Any], messages: list[Message]) -> Completion:
        t0 = time.perf_counter()
        progress: list[str] = []
        try:
            async with asyncio.timeout(self.timeout_s):  # the whole request, body included
                status, headers, body = await self._post(payload, progress)
        except TimeoutError:
            if progress:  # the server answered but trickles: another attempt would too
                raise self._err(
                    f"timed out after {self.timeout_s:g}s with the reply still arriving "
                    "(a trickling server); not retried",
                    retryable=False,
                ) from None
            raise self._err(f"timed out after {self.timeout_s:g}s", retryable=True) from None
        except httpx.TimeoutException:
            raise self._err(f"timed out after {self.timeout_s:g}s", retryable=True) from None
        except httpx.TransportError as e:
            raise self._err(f"connection failed: {e!r}", retryable=True) from e
        except httpx.DecodingError as e:  # a Content-Encoding the body does not match
            raise self._malformed(f"undecodable body: {e}") from None
        if status >= 400:
            detail = " ".join(body.decode("utf-8", "replace").split())[:300]
            if _retryable_status(status):
                raise self._err(
                    f"HTTP {status}: {detail}",
                    retryable=True,
                    retry_after=_retry_after(headers),
                )
            rejected = LLMRejected(
                f"{self.endpoint}: rejected the request with HTTP {status}: {detail}",
                endpoint=self.endpoint,
            )
            rejected.status, rejected.detail = status, detail
            raise rejected
        latency = time.perf_counter() - t0
        text, usage, model = self._parse(body, messages)
        return Completion(text, usage, model=model or self.model, latency_s=latency)

    async def detect(self) -> Capability:
        """The structured-output flavour of this endpoint: the configured one, or (auto) what
        the server reveals, probed once and remembered (docs/structured-outputs.md)."""
        if self.capability is not None:
            return self.capability
        loop = asyncio.get_running_loop()
        if self._probe_lock is None or self._probe_lock[0] is not loop:
            self._probe_lock = (loop, asyncio.Lock())
        async with self._probe_lock[1]:
            if self.capability is None:
                self.capability = await self._detect()
                log.debug(
                    "structured outputs at %s: %s (%s)",
                    self.endpoint, self.capability.flavour, self.capability.how,
                )  # fmt: skip
        return self.capability

    async def _detect(self) -> Capability:
        failed: list[str] = []
        cap = await self._detect_with(failed)
        return replace(cap, failed=tuple(failed)) if failed else cap

    async def _detect_with(self, failed: list[str]) -> Capability:
        mode = self.structured_output
        if mode == "vllm":
            return Capability("vllm", "configured", await self._vllm_version(failed))
        if mode != "auto":
            return Capability(mode, "configured")
        if is_openai_host(self.base_url):
            return Capability("openai", f"host of {self.base_url}")
        got = await self._probe(f"{self.base_url}/models", failed)
        if got is not None:
            status, server, body = got
            flavour = flavour_from_models(body, server) if status == 200 else None
            if flavour == "vllm":
                version = await self._vllm_version(failed)
                return Capability("vllm", "GET /models: owned_by vllm", version)
            if flavour is not None:
                how = "Server header" if "llama.cpp" in server.lower() else "GET /models owned_by"
                return Capability(flavour, how)
        got = await self._probe(f"{server_root(self.base_url)}/api/version", failed)
        if got is not None and got[0] == 200 and isinstance(got[2], dict) and "version" in got[2]:
            return Capability("ollama", f"GET /api/version: Ollama {got[2]['version']}")
        why = "probes failed" if failed else "no server signature"
        return Capability("openai", f"{why}: OpenAI form, dropped if a 400 names it")

    async def _vllm_version(self, failed: list[str]) -> tuple[int, ...] | None:
        got = await self._probe(f"{server_root(self.base_url)}/version", failed)
        if got is None or got[0] != 200 or not isinstance(got[2], dict):
            return None
        return parse_version(str(got[2].get("version", "")))

    async def _probe(self, url: str, failed: list[str]) -> tuple[int, str, Any] | None:
        """(status, Server header, JSON body or None) of a GET, or None if it failed (then
        `failed` gets one line saying why: doctor shows it)."""
        headers = {"Authorization": f"Bearer {self._api_key}", "Accept": "application/json"}
        deadline = min(_PROBE_TIMEOUT_S, self.timeout_s)
        try:
            client = await self._http.get()
            async with asyncio.timeout(deadline):
                async with client.stream("GET", url, headers=headers) as resp:
                    buf = bytearray()
                    async for chunk in resp.aiter_bytes():
                        buf += chunk
                        if len(buf) > _PROBE_BYTES:
                            return resp.status_code, resp.headers.get("server", ""), None
                    try:
                        body = json.loads(buf) if buf else None
                    except (ValueError, RecursionError):
                        body = None
                    return resp.status_code, resp.headers.get("server", ""), body
        except (TimeoutError, httpx.TimeoutException):
            failed.append(f"GET {url}: timed out after {deadline:g}s")
        except httpx.HTTPError as e:
            failed.append(f"GET {url}: {type(e).__name__}: {e}".rstrip(": "))
        log.debug("probe %s failed: %s", url, failed[-1])
        return None

    async def _post(
        self, payload: dict[str, Any], progress: list[str]
    ) -> tuple[int, httpx.Headers, bytes]:
        """Status, headers and body, the body read in chunks and cut at the cap.
        `progress` gets "headers" once the server has started answering."""
        headers = {
            "Authorization": f"Bearer {self._api_key}",
            "User-Agent": f"kgreason/{__version__}",
            "Accept": "application/json",
        }
        client = await self._http.get()
        async with client.stream("POST", self.endpoint, json=payload, headers=headers) as resp:
            progress.append("headers")
            cap = self.max_reply_bytes if resp.status_code < 400 else _ERROR_BODY_BYTES
            declared = resp.headers.get("content-length", "")
            if resp.status_code < 400 and declared.isdigit() and int(declared) > cap:
                raise self._too_large(f" (Content-Length {int(declared):,})")
            buf = bytearray()
            async for chunk in resp.aiter_bytes():  # decoded: a gzip bomb is capped too
                buf += chunk
                if len(buf) > cap:
                    if resp.status_code >= 400:
                        del buf[cap:]
                        break
                    raise self._too_large("")
            return resp.status_code, resp.headers, bytes(buf)

    def _parse(self, raw: bytes, messages: list[Message]) -> tuple[str, Usage, str]:
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):  # nested too deep to decode is not JSON either
            raise self._malformed(f"body is not JSON: {raw[:120]!r}") from None
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
        model = body.get("model")
        model = model if isinstance(model, str) else ""
        return text, self._usage(body.get("usage"), messages, text), model

    def _usage(self, raw: Any, messages: list[Message], text: str) -> Usage:
        if isinstance(raw, dict):
            p, c = raw.get("prompt_tokens"), raw.get("completion_tokens")
            if isinstance(p, int) and isinstance(c, int):
                return Usage(p, c)
        return Usage(
            self.tokens.count_messages(messages), self.tokens.count_text(text), estimated=True
        )
