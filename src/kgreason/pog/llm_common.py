"""What every PoG LLM stage shares: the question context shown in prompts, each stage's
temperature and token limit, and the one call helper (named stage, parse, re-ask once).

Temperatures follow Appendix C: 0.4 while exploring (path selection, supplement), 0 while
reasoning (summary, sufficiency, answers). Initialisation (topic keywords, question analysis)
is not named by the paper; we use the reasoning temperature so that the same question always
starts from the same topic entities and indicator (reproducible runs, cacheable calls).
Token limits are the paper's 256, except question analysis and supplement, whose JSON replies
(several split questions or three predictions with their chains) do not fit in 256 tokens.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ask_parsed
from kgreason.llm.schema import StageSchema
from kgreason.llm.usage import one_paper_call
from kgreason.pog.prompts import prompt_messages
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import QuestionAnalysis, TopicEntity

T = TypeVar("T")

EXPLORATION_STAGES = frozenset({"precise_select", "supplement"})
#: replies that carry structured JSON get more room than the paper's 256 tokens
LONG_REPLY_TOKENS = {"question_analysis": 768, "supplement": 768}


def stage_temperature(stage: str, settings: PoGSettings) -> float:
    if stage in EXPLORATION_STAGES:
        return settings.exploration_temperature
    return settings.reasoning_temperature


def stage_max_tokens(stage: str, settings: PoGSettings) -> int:
    return max(settings.max_tokens, LONG_REPLY_TOKENS.get(stage, 0))


@one_paper_call  # the call and its re-ask are one call as the PoG paper counts (llm/usage.py)
async def call_stage(
    llm: ChatLLM,
    stage: str,
    settings: PoGSettings,
    parser: Callable[[str], T],
    reminder: str,
    schema: StageSchema | None = None,
    **fields: str,
) -> tuple[T, str]:
    """Fill the stage's prompt, call the LLM and parse; one re-ask, then LLMOutputError.
    `schema` (the stage's prompts/<stage>.schema.json) goes with the request."""
    return await ask_parsed(
        llm,
        prompt_messages(stage, **fields),
        parser,
        stage=stage,
        reminder=reminder,
        temperature=stage_temperature(stage, settings),
        max_tokens=stage_max_tokens(stage, settings),
        schema=schema,
    )


@dataclass(frozen=True)
class QuestionContext:
    """The parts of a question every reasoning prompt shows (Q, topics, indicator, splits)."""

    question: str
    topics: tuple[TopicEntity, ...]
    analysis: QuestionAnalysis

    def fields(self) -> dict[str, str]:
        return {
            "question": self.question,
            "topics": topics_field(self.topics),
            "indicator": self.analysis.indicator,
            "split_questions": " ".join(self.analysis.split_questions),
        }


def topics_field(topics: Sequence[TopicEntity]) -> str:
    return json.dumps([t.name for t in topics], ensure_ascii=False)


def paths_field(rendered: Sequence[str], numbered: bool = False) -> str:
    if numbered:
        return "\n".join(f"Path {i}: {p}" for i, p in enumerate(rendered, 1))
    return "\n".join(rendered)
