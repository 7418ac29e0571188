"""The chat-LLM layer: one async interface, stacked middleware, parsing and transcripts."""

from kgreason.llm.base import (
    ChatLLM,
    Completion,
    LLMBudgetExceeded,
    LLMError,
    LLMOutputError,
    LLMTransportError,
    Message,
    Usage,
)
from kgreason.llm.cache import CachedLLM
from kgreason.llm.factory import LLMNotConfigured, build_llm, llm_configured
from kgreason.llm.limit import ConcurrencyLimitedLLM
from kgreason.llm.openai_adapter import LLMMalformedResponse, OpenAIChat
from kgreason.llm.parse import (
    ParseError,
    ask_parsed,
    extract_json,
    parse_braced_answers,
    parse_yes_no,
    read_reply,
    strip_thinking,
)
from kgreason.llm.retry import RetryingLLM
from kgreason.llm.schema import StageSchema, choice_schema, load_stage_schema
from kgreason.llm.transcript import (
    RecordingLLM,
    ReplayLLM,
    TranscriptError,
    TranscriptMismatch,
)
from kgreason.llm.usage import Budget, MeteredLLM, StageUsage, UsageLedger

__all__ = [
    "Budget",
    "CachedLLM",
    "ChatLLM",
    "Completion",
    "ConcurrencyLimitedLLM",
    "LLMBudgetExceeded",
    "LLMError",
    "LLMMalformedResponse",
    "LLMNotConfigured",
    "LLMOutputError",
    "LLMTransportError",
    "Message",
    "MeteredLLM",
    "OpenAIChat",
    "ParseError",
    "RecordingLLM",
    "ReplayLLM",
    "RetryingLLM",
    "StageSchema",
    "StageUsage",
    "TranscriptError",
    "TranscriptMismatch",
    "Usage",
    "UsageLedger",
    "ask_parsed",
    "build_llm",
    "choice_schema",
    "extract_json",
    "llm_configured",
    "load_stage_schema",
    "parse_braced_answers",
    "parse_yes_no",
    "read_reply",
    "strip_thinking",
]
