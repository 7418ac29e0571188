"""Linking mentions to KG entities without ever substituting one silently.

A mention (a `--topic` name, a `[bracketed]` span, an LLM keyword, a span of the question)
links to an entity in one of two ways, and the TopicEntity says which:
- "exact": a name equal to the mention up to case, spacing, underscores, punctuation and
  diacritics (`kgreason.kg.ranking.normalize_name`, the KG's own index form), score 1.0;
- "fuzzy": otherwise, the closest name when its similarity reaches `threshold`
  (pog.link_threshold), with that similarity as the score.
Anything else raises UnknownMentionError naming the mention with up to 3 suggestions.

Questions without brackets (LLM-free mode): every word span (up to `max_ngram` words) is
looked up; the longest spans win (a good fuzzy match of "Once Were Warrior" beats the exact
films "Once" and "Warrior"), then the best score, without overlaps; a fuzzy span that only
adds words around an exact mention of the same entity gives way to it. A single lower-case word
("war", "country") is kept only when nothing stronger was found, so common words that happen
to name a node do not become topic entities beside a real name.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kgreason.kg.base import (
    EntityMatch,
    InvalidIdentifierError,
    KnowledgeGraph,
    UnknownEntityError,
)
from kgreason.kg.ranking import normalize_name
from kgreason.pog.types import TopicEntity

SEARCH_LIMIT = 10
DEFAULT_THRESHOLD = 0.85
_WORDS = re.compile(r"[\w'’.&-]+")
_POSSESSIVE = re.compile(r"['’]s$")
#: function words of English questions (shared by the linker and the zero-shot path ranker)
QUESTION_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "from",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "how",
        "is",
        "are",
        "was",
        "were",
        "did",
        "do",
        "does",
        "be",
        "been",
        "that",
        "this",
        "these",
        "those",
        "and",
        "or",
    ]
)
#: words that never start or end a mention (a name may still contain them: "Once Were Warriors")
STOP = QUESTION_STOPWORDS | {"film", "films", "movie", "movies"}
_ARTICLES = frozenset({"the", "a", "an"})


class UnknownMentionError(UnknownEntityError):
    """A mention that matches no entity name well enough; carries the closest names."""

    def __init__(self, mention: str, suggestions: Sequence[str], where: str = ""):
        self.mention = mention
        self.suggestions = list(suggestions)
        hint = f" (did you mean: {', '.join(self.suggestions)}?)" if self.suggestions else ""
        place = f" in {where}" if where else ""
        super().__init__(f'unknown entity "{mention}"{place}{hint}')


def dedupe(topics: Sequence[TopicEntity]) -> list[TopicEntity]:
    """The first link of each entity, in order."""
    seen: set[str] = set()
    out = []
    for t in topics:
        if t.id not in seen:
            seen.add(t.id)
            out.append(t)
    return out


def _link(m: EntityMatch, mention: str) -> TopicEntity:
    if m.kind in ("exact", "normalized"):
        return TopicEntity(m.id, m.name, mention, 1.0, "exact")
    return TopicEntity(m.id, m.name, mention, round(m.score, 4), "fuzzy")


async def best_match(
    kg: KnowledgeGraph, mention: str, threshold: float, *, fuzzy: bool = True
) -> tuple[TopicEntity | None, list[EntityMatch]]:
    """(link or None, the matches seen): exact/normalised first, fuzzy only without one."""
    hits = await kg.search(mention, limit=SEARCH_LIMIT, fuzzy=False)
    if hits:
        return _link(hits[0], mention), hits
    if not fuzzy:
        return None, []
    hits = await kg.search(mention, limit=SEARCH_LIMIT, fuzzy=True)
    if hits and hits[0].score >= threshold:
        return _link(hits[0], mention), hits
    return None, hits


async def resolve_mention(
    kg: KnowledgeGraph, mention: str, *, threshold: float = DEFAULT_THRESHOLD
) -> TopicEntity:
    """Exact or good fuzzy link of `mention`; UnknownMentionError (with suggestions) else."""
    link, hits = await best_match(kg, mention, threshold)
    if link is None:
        names = list(dict.fromkeys(h.name for h in hits))[:3]
        raise UnknownMentionError(mention, names)
    return link


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


async def resolve_given(
    kg: KnowledgeGraph, given: Sequence[str], *, threshold: float = DEFAULT_THRESHOLD
) -> list[TopicEntity]:
    """Each given string is an id of the KG (method "given") or a name to resolve; the
    order is kept, duplicates dropped."""
    known = await _names_of_ids(kg, list(given))
    out = []
    for g in given:
        if g in known:
            out.append(TopicEntity(g, known[g], g, 1.0, "given"))
        else:
            out.append(await resolve_mention(kg, g, threshold=threshold))
    return dedupe(out)


@dataclass(frozen=True)
class _Span:
    start: int
    n: int
    link: TopicEntity
    #: a single lower-case word: kept only when nothing stronger is found
    weak: bool


def _spans(words: Sequence[str], max_ngram: int) -> list[tuple[int, int, str]]:
    out = []
    for n in range(min(max_ngram, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            low = [w.lower() for w in gram]
            if low[-1] in STOP or (low[0] in STOP and not (n > 1 and low[0] in _ARTICLES)):
                continue
            if n == 1 and len(gram[0]) < 3:
                continue
            text = " ".join(gram).strip(".")
            out.append((i, n, text))
            # "Xena Ardent's parent": the name without its possessive too (an exact match
            # then beats the fuzzy one with it; the mention leaves the 's to the question)
            bare = _POSSESSIVE.sub("", text)
            if bare != text and len(bare) >= 3:
                out.append((i, n, bare))
    return out


def _exact_ends(found: Sequence[_Span]) -> dict[tuple[str, int], list[int]]:
    """(entity, start word) -> end words of the exact spans there."""
    ends: dict[tuple[str, int], list[int]] = {}
    for e in found:
        if e.link.method == "exact":
            ends.setdefault((e.link.id, e.start), []).append(e.start + e.n)
    return ends


def _holds_exact(s: _Span, ends: dict[tuple[str, int], list[int]]) -> bool:
    """Whether an exact span of the same entity lies inside `s`: looked up by its start
    word (at most max_ngram of them), not by scanning every exact span (quadratic in a
    question naming many entities)."""
    stop = s.start + s.n
    return any(end <= stop for at in range(s.start, stop) for end in ends.get((s.link.id, at), ()))


async def link_spans(
    kg: KnowledgeGraph,
    question: str,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    max_ngram: int = 6,
) -> list[TopicEntity]:
    """Topic entities named in an unbracketed question (see the module docstring)."""
    words = _WORDS.findall(question)
    found: list[_Span] = []
    for i, n, text in _spans(words, max_ngram):
        # fuzzy only where a typo is plausible: several words, or one capitalised long word
        fuzzy = n > 1 or (len(text) >= 5 and text[:1].isupper())
        link, _ = await best_match(kg, text, threshold, fuzzy=fuzzy)
        if link is not None:
            one_word = len(normalize_name(text).split()) == 1  # "tigres_uanl" is two
            weak = one_word and not text[:1].isupper() and not any(c.isdigit() for c in text)
            found.append(_Span(i, n, link, weak))
    # a fuzzy span around an exact mention of the same entity ("club Charlton Athletic FC"
    # around "Charlton Athletic FC") is that exact mention plus noise: keep the exact one
    ends = _exact_ends(found)
    found = [s for s in found if s.link.method == "exact" or not _holds_exact(s, ends)]
    found.sort(key=lambda s: (-s.n, -s.link.score, s.start))
    used = [False] * len(words)
    chosen: list[_Span] = []
    for s in found:
        if not any(used[s.start : s.start + s.n]):
            used[s.start : s.start + s.n] = [True] * s.n
            chosen.append(s)
    strong = [s for s in chosen if not s.weak]
    return dedupe([s.link for s in sorted(strong or chosen, key=lambda s: s.start)])
