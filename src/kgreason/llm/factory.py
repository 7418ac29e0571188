"""Build the shared LLM stack from settings.

Order, innermost first, and why:

    OpenAIChat -> RetryingLLM -> ConcurrencyLimitedLLM -> CachedLLM -> RecordingLLM

- Retry wraps the adapter directly: it retries one HTTP call, nothing else.
- The concurrency limit sits outside retry, so a call keeps its slot while it backs off and a
  rate-limited server is not hit by every waiting task at once.
- The cache sits outside both: a hit costs no slot, no retry and no network.
- The recorder is outermost, so the transcript holds every call a stage made, cache hits
  included, and replaying it reproduces the whole run with no cache present.

Per-question accounting is deliberately not in this stack: callers wrap it with
`MeteredLLM(llm, UsageLedger(), Budget(...))` per question, so each question has its own
figures and budget while the cache, connection pool and concurrency limit are shared.
With `replay`, a `ReplayLLM` replaces the whole network side (no cache, retry or limit).
"""

from __future__ import annotations

from pathlib import Path

from kgreason.llm.base import ChatLLM, LLMError
from kgreason.llm.cache import CachedLLM
from kgreason.llm.limit import ConcurrencyLimitedLLM
from kgreason.llm.openai_adapter import OpenAIChat
from kgreason.llm.retry import RetryingLLM
from kgreason.llm.settings import LLMSettings
from kgreason.llm.transcript import RecordingLLM, ReplayLLM
from kgreason.llm.usage import Budget


class LLMNotConfigured(LLMError):
    """No endpoint is configured; the caller should run LLM-free or say how to configure one."""


NOT_CONFIGURED_HINT = "no LLM configured (set OPENAI_BASE_URL / OPENAI_API_KEY)"


def llm_configured(s: LLMSettings) -> bool:
    """True iff an endpoint or a key is set (a key alone means the OpenAI API)."""
    return bool(s.base_url) or bool(s.api_key)


def build_llm(
    s: LLMSettings,
    *,
    cache: bool | None = None,
    transcript: Path | None = None,
    replay: Path | None = None,
) -> ChatLLM:
    """The LLM stack for `s`. `cache` overrides `s.cache` (False for --no-cache);
    `transcript` overrides `s.transcript_path`; `replay` answers from a transcript instead
    of the network and needs no endpoint."""
    transcript = transcript if transcript is not None else s.transcript_path
    if (
        replay is not None
        and transcript is not None
        and Path(replay).resolve() == Path(transcript).resolve()
    ):
        raise LLMError(f"cannot record to the transcript being replayed: {replay}")
    llm: ChatLLM
    if replay is not None:
        llm = ReplayLLM(replay)
    else:
        if not llm_configured(s):
            raise LLMNotConfigured(NOT_CONFIGURED_HINT)
        adapter = OpenAIChat(
            s.model,
            s.base_url,
            s.api_key,
            s.timeout_s,
            max_reply_bytes=s.max_reply_bytes,
            structured_output=s.structured_output,
            structured_strict=s.structured_strict,
        )
        llm = adapter
        llm = RetryingLLM(
            llm,
            max_attempts=s.max_retries + 1,
            base_s=s.backoff_base_s,
            cap_s=s.backoff_cap_s,
        )
        llm = ConcurrencyLimitedLLM(llm, s.concurrency)
        use_cache = s.cache if cache is None else cache
        if use_cache and s.cache_path is not None:
            llm = CachedLLM(llm, s.cache_path, endpoint=adapter.base_url)
    if transcript is not None:
        llm = RecordingLLM(llm, transcript)
    return llm


def configured_llm(s: LLMSettings) -> ChatLLM | None:
    """The LLM stack of these settings (retries, concurrency limit, cache), or None when
    no endpoint or key is configured."""
    return build_llm(s) if llm_configured(s) else None


def question_budget(s: LLMSettings) -> Budget:
    """The per-question LLM budget these settings set."""
    return Budget(s.max_calls_per_question, s.max_tokens_per_question)
