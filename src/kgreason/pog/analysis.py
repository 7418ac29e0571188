"""Question analysis (section 4.1): one LLM call returning the split questions and the LLM
indicator; the topic-entity order and the predicted depth D_predict are read off the indicator.

The indicator is a chain alternating node and relation (`"A" - r1 - x - r2 - answer(y)`), so
the distance between two nodes is half the difference of their positions. D_predict is the
largest distance between the answer and a topic entity, as the paper defines it. Reading it
from the chain (rather than asking the model for a number) keeps depth and order consistent
with the chain the model wrote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kgreason.kg.ranking import normalize_name
from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError, extract_json
from kgreason.llm.schema import load_stage_schema
from kgreason.pog.llm_common import call_stage, topics_field
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import QuestionAnalysis, TopicEntity

#: " - ", " -> ", "->", "<-" between chain items. A match may start only where a run of
#: whitespace starts (or at a non-space): one starting inside a run would also start at
#: the run's beginning, which is tried first, and without the guard the regex rescanned
#: the rest of a long run from each of its characters (quadratic on many spaces)
_SEP = re.compile(r"(?:(?<!\s)|(?!\s))(?:\s+[-\u2013\u2014]+>?\s+|\s*->\s*|\s*<-\s*)")
_ANSWER = re.compile(r"^\s*answer\b", re.I)

REMINDER = (
    'Reply with a JSON object only: {"split_questions": [...], "indicator": "...", '
    '"topic_order": [...]}; the indicator alternates nodes and relations separated by " - " '
    "and contains answer(...) once."
)


@dataclass(frozen=True)
class IndicatorReading:
    #: indices into the topic list, in the order the chain mentions them
    order: list[int]
    #: node distance from the answer to each topic (same indexing as the topic list)
    distances: dict[int, int]

    @property
    def depth(self) -> int:
        return max(self.distances.values(), default=1) or 1


def _clean(item: str) -> str:
    return normalize_name(item.strip().strip("\"'\u201c\u201d{}[]()"))


def read_indicator(indicator: str, topic_names: Sequence[str]) -> IndicatorReading:
    """Topic order and answer distances in an indicator chain; ParseError if the chain has no
    answer node. Topics the chain does not mention keep their given order, after the others,
    and count as one hop from the answer (the least the chain can claim)."""
    items = [s for s in _SEP.split(indicator.strip()) if s.strip()]
    answer_pos = [i for i, s in enumerate(items) if _ANSWER.match(s.strip().strip("\"'"))]
    if not answer_pos:
        raise ParseError("the indicator has no answer(...) node")
    a = answer_pos[0]
    norm_topics = [normalize_name(n) for n in topic_names]
    positions: dict[int, int] = {}
    for pos, item in enumerate(items):
        c = _clean(item)
        for ti, tn in enumerate(norm_topics):
            if ti in positions or not tn:
                continue
            if c == tn or (tn in c and pos % 2 == a % 2):
                positions[ti] = pos
                break
    order = sorted(positions, key=positions.__getitem__)
    order += [i for i in range(len(topic_names)) if i not in positions]
    distances = {
        i: max(1, (abs(positions[i] - a) + 1) // 2) if i in positions else 1
        for i in range(len(topic_names))
    }
    return IndicatorReading(order, distances)


def checked_order(order: Sequence[str], topics: Sequence[TopicEntity]) -> list[str]:
    """The topic order PoG explores in must name every topic entity exactly once:
    a topic the indicator names twice keeps its first place, one it omits goes last, in the
    linked order. (read_indicator already reads it so; this is the guard.)"""
    ids = dict.fromkeys(t.id for t in topics)
    out = [t for t in dict.fromkeys(order) if t in ids]
    kept = set(out)
    out += [t for t in ids if t not in kept]
    return out


def parse_analysis(text: str, topics: Sequence[TopicEntity]) -> QuestionAnalysis:
    data = extract_json(text)
    if not isinstance(data, dict):
        raise ParseError("question analysis: expected a JSON object")
    splits = data.get("split_questions")
    indicator = data.get("indicator")
    if not isinstance(indicator, str) or not indicator.strip():
        raise ParseError("question analysis: missing 'indicator'")
    if isinstance(splits, str):
        splits = [splits]
    if not isinstance(splits, list) or not all(isinstance(s, str) for s in splits) or not splits:
        raise ParseError("question analysis: 'split_questions' must be a non-empty list")
    reading = read_indicator(indicator, [t.name for t in topics])
    return QuestionAnalysis(
        split_questions=[s.strip() for s in splits if s.strip()],
        indicator=indicator.strip(),
        ordered_topics=checked_order([topics[i].id for i in reading.order], topics),
        predicted_depth=reading.depth,
        raw=text,
    )


async def analyze_question(
    llm: ChatLLM, question: str, topics: Sequence[TopicEntity], settings: PoGSettings
) -> QuestionAnalysis:
    """One `question_analysis` call; raises LLMOutputError if the reply stays unreadable."""
    value, _raw = await call_stage(
        llm,
        "question_analysis",
        settings,
        lambda text: parse_analysis(text, topics),
        REMINDER,
        schema=load_stage_schema("kgreason.pog", "question_analysis"),
        question=question,
        topics=topics_field(topics),
    )
    return value
