"""Reasoning (ToG section 2.1.3): after each round the LLM judges whether the facts on the
N paths suffice to answer (stage `tog.reasoning`, temperature 0). An unreadable verdict,
after one re-ask, counts as "not yet" (ToG's code reads anything but {Yes} so) and is
recorded, so exploration goes on instead of the question ending."""

from __future__ import annotations

from kgreason.llm.base import ChatLLM, LLMOutputError
from kgreason.tog.calls import call_stage, triples_text
from kgreason.tog.parsing import parse_sufficient
from kgreason.tog.settings import ToGSettings

REMINDER = "Start your reply with {Yes} or {No}."


async def is_sufficient(
    llm: ChatLLM,
    question: str,
    facts: list[str],
    settings: ToGSettings,
    recovered: list[dict[str, str]],
) -> bool:
    try:
        verdict, _ = await call_stage(
            llm,
            "reasoning",
            settings,
            parse_sufficient,
            REMINDER,
            question=question,
            facts=triples_text(facts),
        )
    except LLMOutputError as e:
        recovered.append({"stage": "tog.reasoning", "recovery": "not sufficient", "error": str(e)})
        return False
    return verdict
