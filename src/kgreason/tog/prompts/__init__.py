"""ToG's prompt templates, one text file per stage, written in our own words from what the
ToG paper describes (the released prompt text is not copied); the few-shot examples are ours.
"""

from __future__ import annotations

from kgreason.llm.base import Message
from kgreason.prompts import load_prompt


def prompt_messages(name: str, **fields: str) -> list[Message]:
    """The chat messages for ToG stage template `name` (a missing field raises)."""
    return [{"role": "user", "content": load_prompt("kgreason.tog", name, **fields)}]
