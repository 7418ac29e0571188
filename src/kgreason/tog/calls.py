"""The one LLM call helper of ToG's stages: the stage's prompt, temperature and token limit,
a named stage (`tog.<stage>`) for usage accounting, one re-ask on an unreadable reply."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ask_parsed
from kgreason.tog.prompts import prompt_messages
from kgreason.tog.settings import ToGSettings

T = TypeVar("T")


async def call_stage(
    llm: ChatLLM,
    name: str,
    settings: ToGSettings,
    parser: Callable[[str], T],
    reminder: str,
    **fields: str,
) -> tuple[T, str]:
    stage = f"tog.{name}"
    return await ask_parsed(
        llm,
        prompt_messages(name, **fields),
        parser,
        stage=stage,
        reminder=reminder,
        temperature=settings.temperature(stage),
        max_tokens=settings.max_tokens,
    )


def triples_text(lines: list[str]) -> str:
    return "\n".join(lines) if lines else "(none)"
