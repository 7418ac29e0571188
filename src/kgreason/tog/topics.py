"""Topic entities for ToG, linked by PoG's linker (pog/linking.py) so both methods start
from the same entities: the dataset's own (CWQ/WebQSP/GrailQA `topic_entity`), MetaQA's
`[brackets]`, or else the word spans of the question that name an entity exactly or nearly
(no LLM call; ToG's datasets all give their topic entities)."""

from __future__ import annotations

from kgreason.kg.base import KnowledgeGraph
from kgreason.pog.linking import dedupe, link_spans, resolve_mention
from kgreason.pog.topic import TopicInput, bracketed_topics, given_topics
from kgreason.pog.types import TopicEntity


async def link_topics(
    kg: KnowledgeGraph, question: str, given: TopicInput | None, threshold: float
) -> list[TopicEntity]:
    if given:
        return await given_topics(kg, None, given, threshold=threshold)
    bracketed = bracketed_topics(question)
    if bracketed:
        return dedupe([await resolve_mention(kg, b, threshold=threshold) for b in bracketed])
    return await link_spans(kg, question, threshold=threshold)
