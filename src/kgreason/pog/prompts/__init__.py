"""PoG's prompt templates (Appendix E), one text file per stage, with our own few-shot examples.

Filled by the shared strict loader `kgreason.prompts.load_prompt`: a missing field raises.
"""

from __future__ import annotations

from kgreason.llm.base import Message
from kgreason.prompts import load_prompt as _load


def load_prompt(name: str, **fields: str) -> str:
    """PoG template `name` filled with `fields` (a missing field raises PromptFieldError)."""
    return _load("kgreason.pog", name, **fields)


def prompt_messages(name: str, **fields: str) -> list[Message]:
    """The chat messages for stage template `name` filled with `fields`."""
    return [{"role": "user", "content": load_prompt(name, **fields)}]
