"""TEST-ONLY: scripted ToG replies that read the prompt they answer, like a careful model."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from kgreason.llm.base import Message


def _field(messages: list[Message], start: str, end: str = "\nA:") -> list[str]:
    text = messages[0]["content"]  # the stage prompt (a re-ask appends to it)
    block = text.rsplit(start, 1)[1].split(end, 1)[0]
    return [line.strip() for line in block.strip().splitlines() if line.strip()]


def listed_relations(messages: list[Message]) -> list[str]:
    return _field(messages, "Relations:\n")


def listed_candidates(messages: list[Message]) -> list[str]:
    return _field(messages, "Candidates:\n")


def shown_facts(messages: list[Message]) -> list[str]:
    return _field(messages, "Facts:\n")


def prefer(words: Sequence[str], listed: Callable[[list[Message]], list[str]], k: int = 3):
    """Score the listed items: those containing an earlier word of `words` score higher."""

    def reply(messages: list[Message]) -> str:
        items = listed(messages)

        def rank(item: str) -> int:
            return next((i for i, w in enumerate(words) if w in item), len(words))

        best = sorted(items, key=rank)[:k]
        raw = [float(len(words) + 1 - rank(b)) for b in best]
        total = sum(raw)
        return json.dumps({b: round(r / total, 3) for b, r in zip(best, raw, strict=True)})

    return reply


def yes_when(pattern: str) -> Callable[[list[Message]], str]:
    def reply(messages: list[Message]) -> str:
        facts = "\n".join(shown_facts(messages))
        ok = re.search(pattern, facts) is not None
        return "{Yes}. The facts answer it." if ok else "{No}. Not enough yet."

    return reply
