"""Topic entity recognition (section 4.1): the LLM extracts topic keywords from the question,
and each keyword is linked to one KG entity.

Linking: the paper embeds the keyword and *all* KG entities with SentenceBERT and takes the
most similar, which always returns SOME entity, however unrelated. Here a keyword links only
to a name that matches it exactly (up to case, spacing, underscores, punctuation and
diacritics) or to the closest name when that is similar enough (pog.link_threshold), and the
TopicEntity says which (`method`, `score`); otherwise the question ends with an
UnknownMentionError naming the keyword and suggesting up to 3 names (see linking.py).
Datasets that name their topic entities (CWQ/WebQSP/GrailQA `topic_entity` {id: name},
MetaQA's `[brackets]`) skip the LLM.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from kgreason.embed.base import Embedder
from kgreason.kg.base import KnowledgeGraph, UnknownEntityError
from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError, split_items
from kgreason.llm.schema import load_stage_schema
from kgreason.pog.linking import (
    DEFAULT_THRESHOLD,
    SEARCH_LIMIT,
    UnknownMentionError,
    dedupe,
    resolve_given,
    resolve_mention,
)
from kgreason.pog.llm_common import call_stage
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import TopicEntity

__all__ = [
    "SEARCH_LIMIT",
    "TopicInput",
    "UnknownMentionError",
    "bracketed_topics",
    "extract_keywords",
    "given_topics",
    "link_keyword",
    "parse_keywords",
    "recognize_topics",
]

_BRACKETS = re.compile(r"\[([^\[\]]+)\]")
#: possessive: spaces, colon and brace are different characters, so giving any back never
#: helps (without it "topic entities" and a long run of spaces was quadratic)
_KEYWORDS = re.compile(r"topic[ _-]?entit(?:y|ies)\s*+:?+\s*+\{([^{}]*+)\}", re.I)

TopicInput = Mapping[str, str] | Sequence[str]


def bracketed_topics(question: str) -> list[str]:
    """MetaQA marks its topic entity in brackets: `what films did [Joel Zwick] direct`."""
    return [m.strip() for m in _BRACKETS.findall(question) if m.strip()]


def parse_keywords(text: str) -> list[str]:
    m = _KEYWORDS.search(text)
    if not m:
        raise ParseError("reply has no 'topic_entities: {...}'")
    out = list(dict.fromkeys(split_items(m.group(1))))
    if not out:
        raise ParseError("'topic_entities: {...}' is empty")
    return out


async def extract_keywords(llm: ChatLLM, question: str, settings: PoGSettings) -> list[str]:
    value, _ = await call_stage(
        llm,
        "topic_entity",
        settings,
        parse_keywords,
        "Reply with one line: topic_entities: {entity 1, entity 2}",
        schema=load_stage_schema("kgreason.pog", "topic_entity"),
        question=question,
    )
    return value


async def link_keyword(
    kg: KnowledgeGraph,
    embedder: Embedder | None,
    keyword: str,
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> TopicEntity:
    """One keyword to one entity, exactly or by a reported fuzzy match (`embedder` is kept
    for the API; linking is by name only, so it never picks an unrelated entity)."""
    return await resolve_mention(kg, keyword, threshold=threshold)


async def _link_all(
    kg: KnowledgeGraph, keywords: Sequence[str], threshold: float
) -> list[TopicEntity]:
    return dedupe([await resolve_mention(kg, kw, threshold=threshold) for kw in keywords])


async def given_topics(
    kg: KnowledgeGraph,
    embedder: Embedder | None,
    given: TopicInput,
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[TopicEntity]:
    """Topic entities the caller supplied: {id: name} (ids must exist), or a list of ids or
    names (an id the KG knows is used directly; anything else is linked by name)."""
    if isinstance(given, Mapping):
        known = await kg.names(list(given))
        missing = [i for i in given if i not in known]
        if missing:
            raise UnknownEntityError(f"topic entity id(s) not in {kg.name}: {', '.join(missing)}")
        return dedupe([TopicEntity(i, given[i] or known[i], i, 1.0, "given") for i in given])
    return await resolve_given(kg, list(given), threshold=threshold)


async def recognize_topics(
    kg: KnowledgeGraph,
    llm: ChatLLM | None,
    embedder: Embedder | None,
    question: str,
    settings: PoGSettings,
    given: TopicInput | None = None,
) -> list[TopicEntity]:
    """Topic(q): supplied topics, else MetaQA brackets, else LLM keywords."""
    th = settings.link_threshold
    if given:
        return await given_topics(kg, embedder, given, threshold=th)
    bracketed = bracketed_topics(question)
    if bracketed:
        return await _link_all(kg, bracketed, th)
    if llm is None:
        raise UnknownEntityError(
            "no topic entity given and no LLM to extract one: pass --topic ENTITY"
        )
    return await _link_all(kg, await extract_keywords(llm, question, settings), th)
