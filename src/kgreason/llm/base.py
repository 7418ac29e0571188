"""Types shared by every LLM adapter and middleware layer.

Every stage talks to an object satisfying `ChatLLM`; adapters (OpenAI-compatible HTTP,
transcript replay, test doubles) and middleware (cache, retry, concurrency limit, usage
metering, budget, recording) all implement it, so they stack freely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Required, TypedDict, runtime_checkable


class Message(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: True when the token counts were computed locally because the server omitted `usage`.
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    cached: bool = False
    latency_s: float = 0.0


#: a JSON Schema document as a dict (the subset llm/schema.py validates)
JsonSchema = dict[str, Any]


class CallOptions(TypedDict, total=False):
    """The keyword options of `ChatLLM.complete`, named once: middleware takes them as
    `**opts: Unpack[CallOptions]` and forwards them untouched, so adding an option is one edit."""

    stage: Required[str]
    temperature: float
    max_tokens: int | None
    sample: int
    #: the JSON schema the reply should satisfy; adapters send it to servers that can
    #: constrain decoding (llm/structured.py), caches and transcripts key on it
    schema: JsonSchema | None


@dataclass(frozen=True)
class Request:
    """`CallOptions` with the protocol's defaults filled in, for layers that read them."""

    stage: str
    temperature: float = 0.0
    max_tokens: int | None = 256
    sample: int = 0
    schema: JsonSchema | None = None

    @classmethod
    def of(cls, opts: CallOptions) -> Request:
        return cls(**opts)


@runtime_checkable
class ChatLLM(Protocol):
    """The one interface every stage uses. `stage` names the caller for accounting;
    `sample` distinguishes repeated draws of the same prompt (self-consistency, repairs)
    so a cache never replays one draw as another. `schema` is the JSON schema the stage
    expects its reply to satisfy: HTTP adapters send it where the server can constrain
    decoding, caches and transcripts key on it, anything else may ignore it (callers
    parse and check the reply either way)."""

    model: str

    async def complete(
        self,
        messages: list[Message],
        *,
        stage: str,
        temperature: float = 0.0,
        max_tokens: int | None = 256,
        sample: int = 0,
        schema: JsonSchema | None = None,
    ) -> Completion: ...


class LLMError(Exception):
    """Base of every error raised by the LLM layer."""

    #: the name results and the CLI report for this failure (subclasses narrow it)
    error_kind = "llm-error"


class LLMTransportError(LLMError):
    """The endpoint could not be reached or kept failing after retries."""

    #: the name results and the CLI report for this failure (subclasses narrow it)
    error_kind = "llm-unreachable"

    def __init__(
        self,
        message: str,
        *,
        endpoint: str = "",
        retryable: bool = False,
        retry_after_s: float | None = None,
    ):
        super().__init__(message)
        self.endpoint = endpoint
        self.retryable = retryable
        #: the server's Retry-After hint, if it sent one; a floor for the next backoff delay
        self.retry_after_s = retry_after_s


class LLMBadReply(LLMTransportError):
    """The endpoint answered 2xx but the body is not an OpenAI chat completion."""

    error_kind = "llm-bad-reply"


class LLMRejected(LLMTransportError):
    """The endpoint refused the request (HTTP 4xx other than 408/429): retrying cannot help."""

    error_kind = "llm-rejected"
    #: the HTTP status and the start of the error body (what a caller can match on)
    status: int = 0
    detail: str = ""


class LLMTooLarge(LLMTransportError):
    """The reply body exceeded `llm.max_reply_bytes`; reading stopped at the cap."""

    error_kind = "llm-too-large"


class LLMOutputError(LLMError):
    """The model's reply could not be parsed into what the stage needs, even after a re-ask."""

    error_kind = "llm-unreadable-reply"

    def __init__(self, message: str, *, stage: str, raw: str = ""):
        super().__init__(message)
        self.stage = stage
        self.raw = raw


class LLMBudgetExceeded(LLMError):
    """A per-question budget (calls or tokens) would be exceeded; work stops here."""

    error_kind = "llm-budget-exceeded"

    def __init__(self, message: str, *, stage: str = ""):
        super().__init__(message)
        self.stage = stage
