"""Topic entity recognition (section 4.1): the LLM extracts topic keywords from the question,
and each keyword is linked to one KG entity.

Linking: the paper embeds the keyword and *all* KG entities with SentenceBERT and takes the
most similar. Embedding a whole KG per question is not practical on an endpoint, so candidates
come from the KG's name search (exact, normalised, then approximate) and SentenceBERT ranks
them; an exact or normalised name match is kept as is. Datasets that name their topic
entities (CWQ/WebQSP/GrailQA `topic_entity` {id: name}, MetaQA's `[brackets]`) skip the LLM.
A keyword that matches no entity ends the question with UnknownEntityError naming it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence

from kgreason.embed.base import Embedder, cosine_topk
from kgreason.kg.base import InvalidIdentifierError, KnowledgeGraph, UnknownEntityError
from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError
from kgreason.pog.llm_common import call_stage
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import TopicEntity

_BRACKETS = re.compile(r"\[([^\[\]]+)\]")
_KEYWORDS = re.compile(r"topic[ _-]?entit(?:y|ies)\s*:?\s*\{([^{}]*)\}", re.I)

SEARCH_LIMIT = 10

TopicInput = Mapping[str, str] | Sequence[str]


def bracketed_topics(question: str) -> list[str]:
    """MetaQA marks its topic entity in brackets: `what films did [Joel Zwick] direct`."""
    return [m.strip() for m in _BRACKETS.findall(question) if m.strip()]


def parse_keywords(text: str) -> list[str]:
    m = _KEYWORDS.search(text)
    if not m:
        raise ParseError("reply has no 'topic_entities: {...}'")
    out: list[str] = []
    for part in m.group(1).split(","):
        part = part.strip().strip("\"'").strip()
        if part and part not in out:
            out.append(part)
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
        question=question,
    )
    return value


async def link_keyword(kg: KnowledgeGraph, embedder: Embedder, keyword: str) -> TopicEntity:
    # exact / normalised matches first: an approximate scan is only needed without them
    matches = await kg.search(keyword, limit=SEARCH_LIMIT, fuzzy=False)
    if not matches:
        matches = await kg.search(keyword, limit=SEARCH_LIMIT, fuzzy=True)
    if not matches:
        raise UnknownEntityError(f"no entity in {kg.name} matches the topic '{keyword}'")
    exact = [m for m in matches if m.kind in ("exact", "normalized")]
    if exact:
        m = exact[0]
        return TopicEntity(m.id, m.name, keyword, m.score)
    names = [m.name for m in matches]
    idx, scores = cosine_topk(embedder.embed([keyword])[0], embedder.embed(names), 1)
    m = matches[int(idx[0])]
    return TopicEntity(m.id, m.name, keyword, round(float(scores[0]), 4))


async def _link_all(
    kg: KnowledgeGraph, embedder: Embedder, keywords: Sequence[str]
) -> list[TopicEntity]:
    out: list[TopicEntity] = []
    for kw in keywords:
        t = await link_keyword(kg, embedder, kw)
        if all(t.id != o.id for o in out):
            out.append(t)
    return out


async def _names_of_ids(kg: KnowledgeGraph, candidates: Sequence[str]) -> dict[str, str]:
    """D(.) of the candidates that are ids of this KG; a name is not an id, and endpoints
    refuse what fails their id syntax (InvalidIdentifierError), so try those one by one."""
    try:
        return await kg.names(list(candidates))
    except InvalidIdentifierError:
        out: dict[str, str] = {}
        for c in candidates:
            with contextlib.suppress(InvalidIdentifierError):
                out.update(await kg.names([c]))
        return out


async def given_topics(
    kg: KnowledgeGraph, embedder: Embedder, given: TopicInput
) -> list[TopicEntity]:
    """Topic entities the caller supplied: {id: name} (ids must exist), or a list of ids or
    names (an id the KG knows is used directly; anything else is linked by name)."""
    if isinstance(given, Mapping):
        known = await kg.names(list(given))
        missing = [i for i in given if i not in known]
        if missing:
            raise UnknownEntityError(f"topic entity id(s) not in {kg.name}: {', '.join(missing)}")
        return [TopicEntity(i, given[i] or known[i]) for i in given]
    known = await _names_of_ids(kg, list(given))
    out = [TopicEntity(g, known[g]) for g in given if g in known]
    out += await _link_all(kg, embedder, [g for g in given if g not in known])
    return out


async def recognise_topics(
    kg: KnowledgeGraph,
    llm: ChatLLM | None,
    embedder: Embedder,
    question: str,
    settings: PoGSettings,
    given: TopicInput | None = None,
) -> list[TopicEntity]:
    """Topic(q): supplied topics, else MetaQA brackets, else LLM keywords (name search when
    there is no LLM: the whole question is then the keyword)."""
    if given:
        return await given_topics(kg, embedder, given)
    bracketed = bracketed_topics(question)
    if bracketed:
        return await _link_all(kg, embedder, bracketed)
    if llm is None:
        raise UnknownEntityError(
            "no topic entity given and no LLM to extract one: pass --topic ENTITY"
        )
    return await _link_all(kg, embedder, await extract_keywords(llm, question, settings))
