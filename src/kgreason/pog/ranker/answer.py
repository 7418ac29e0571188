"""LLM-free mode with a learned ranker: ANSWER with the top path's answer set.

The answer set is the top path's end entities (or, for a path joining several topic
entities, the non-topic entities on it), shown by name; its confidence is the softmax weight
of the top path among the ranked paths (a set-level confidence: every member shares it).
The following paths are the evidence. The result stays labelled "llm-free": this is a
learned ranker's answer, not PoG's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kgreason.kg.base import UNNAMED
from kgreason.pog.fuzzy import ScoredPath
from kgreason.pog.labels import RANKER_NOTE
from kgreason.pog.ranker.supervision import answer_set, order_answers
from kgreason.pog.render import NameBook
from kgreason.pog.types import AnswerEntity, PoGResult


def confidence(ranked: Sequence[ScoredPath]) -> float:
    """Softmax weight of the first path among `ranked` (scores are logits)."""
    if not ranked:
        return 0.0
    s = np.array([r.score for r in ranked], dtype=np.float64)
    e = np.exp(s - s.max())
    return float(e[0] / e.sum())


async def apply_answer(
    result: PoGResult, ranked: Sequence[ScoredPath], book: NameBook, topics: Sequence[str]
) -> None:
    """Fill `result.answers` from the top path and put them first among the candidates."""
    if not ranked:
        return
    ids = answer_set(ranked[0].path, topics)
    await book.ensure(ids)
    named = [e for e in order_answers(ids, book.names) if book.names.get(e) != UNNAMED]
    result.answers = [AnswerEntity(book.get(e), e) for e in named]
    first = {a.id for a in result.answers}
    result.candidates = result.answers + [c for c in result.candidates if c.id not in first]
    result.trace.append(
        {
            "stage": "ranker",
            "note": RANKER_NOTE,
            "confidence": round(confidence(ranked), 4),
            "answer_set_size": len(named),
        }
    )
