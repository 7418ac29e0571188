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

__all__ = [
    "ChatLLM",
    "Completion",
    "LLMBudgetExceeded",
    "LLMError",
    "LLMOutputError",
    "LLMTransportError",
    "Message",
    "Usage",
]
