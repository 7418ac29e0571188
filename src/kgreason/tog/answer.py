"""Answer generation (ToG section 2.1.3): from the explored facts (stage `tog.answer`), or,
when the depth is exhausted without sufficient facts or nothing could be explored, from the
LLM's own knowledge (stage `tog.own_knowledge`), as the paper does. The result says which
(`answer_source`). An unreadable answer after one re-ask raises LLMOutputError: the question
ends with a named error, never with an empty answer that would look like "no answer"."""

from __future__ import annotations

from kgreason.llm.base import ChatLLM
from kgreason.tog.calls import call_stage, triples_text
from kgreason.tog.parsing import parse_answer
from kgreason.tog.settings import ToGSettings

REMINDER = "End your reply with a line: answer: {ANSWER}"


async def answer_from_facts(
    llm: ChatLLM, question: str, facts: list[str], settings: ToGSettings
) -> tuple[list[str], str]:
    return await call_stage(
        llm, "answer", settings, parse_answer, REMINDER, question=question,
        facts=triples_text(facts),
    )  # fmt: skip


async def answer_from_knowledge(
    llm: ChatLLM, question: str, settings: ToGSettings
) -> tuple[list[str], str]:
    return await call_stage(
        llm, "own_knowledge", settings, parse_answer, REMINDER, question=question
    )
