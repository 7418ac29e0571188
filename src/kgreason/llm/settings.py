"""LLM endpoint settings. `api_key`/`base_url` also come from OPENAI_API_KEY/OPENAI_BASE_URL."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: how structured output is asked for (kgreason.llm.structured)
Mode = Literal["auto", "openai", "vllm", "ollama", "llamacpp", "off"]


class LLMSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = "gpt-3.5-turbo"
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    #: One deadline per request: connect + headers + the whole body.
    timeout_s: float = 60.0
    #: Replies larger than this are refused while streaming (error kind llm-too-large).
    max_reply_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    max_retries: int = 6
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 30.0
    concurrency: int = 8
    cache_path: Path | None = Path(".kgreason/llm-cache.sqlite")
    #: Disable the response cache (also: KGREASON_LLM__CACHE=false or --no-cache).
    cache: bool = True
    transcript_path: Path | None = None
    max_calls_per_question: int | None = None
    max_tokens_per_question: int | None = None
    #: How stage schemas reach the server: "auto" detects per endpoint (docs/
    #: structured-outputs.md), a flavour name forces that request shape, "off" never sends
    #: one. Replies are parsed and validated the same way in every mode.
    structured_output: Mode = "auto"
    #: OpenAI's `strict` flag, sent for schemas that strict mode accepts
    structured_strict: bool = True
