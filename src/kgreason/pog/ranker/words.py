"""The question's words that may name a relation: one vocabulary of non-relation words for
every ranking (zero-shot, order-aware, trained), so that they split a question alike. Kept
apart from the rankings that read it, which import each other's parts."""

from __future__ import annotations

import re

from kgreason.pog.linking import QUESTION_STOPWORDS
from kgreason.pog.ranker.features import MASK

#: a word, or an `_`-joined compound kept whole ("place_of_birth" -> "place of birth"):
#: a question quoting a relation name asks for ONE hop, not one per part
_WORD = re.compile(r"[a-z][a-z'-]+(?:_[a-z][a-z'-]*)*")
_STOP = (
    QUESTION_STOPWORDS
    | {"x", "also", "has", "have", "had"}
    | {
        # filler of the generated training questions' templates (synth.py), never a relation
        "things",
        "thing",
        "one",
        "ones",
        "name",
        "tell",
        "me",
        "both",
        "its",
        "as",
        "whatever",
    }
)


#: words that never name a relation (the order-aware ranking's phrase boundaries too)
STOPWORDS: frozenset[str] = frozenset(_STOP)


def content_words(question: str) -> list[str]:
    words = (w.replace("_", " ") for w in _WORD.findall(question.lower()))
    return [w for w in words if w not in _STOP and w != MASK.lower()]
