"""LLM-free mode with a learned ranker: ANSWER with the top path's answer set.

The answer set is the top path's end entities (or, for a path joining several topic
entities, the non-topic entities on it), shown by name; its confidence is the softmax weight
of the top path among the ranked paths (a set-level confidence: every member shares it), or
for a zero-shot ranking, whose scores are no logits, a calibrated probability
(calibration.py).
The following paths are the evidence. The result stays labelled "llm-free": this is a
learned ranker's answer, not PoG's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kgreason.kg.base import UNNAMED
from kgreason.pog.fuzzy import ScoredPath
from kgreason.pog.labels import ABSTAIN_NOTE, JOIN_NOTE, LOW_CONFIDENCE_NOTE, RANKER_NOTE
from kgreason.pog.ranker.calibration import Calibration, confidence, signals
from kgreason.pog.ranker.supervision import answer_set, order_answers
from kgreason.pog.render import NameBook
from kgreason.pog.types import AnswerEntity, PoGResult


async def apply_answer(
    result: PoGResult,
    ranked: Sequence[ScoredPath],
    book: NameBook,
    topics: Sequence[str],
    *,
    scalars: Mapping[str, float] | None = None,
    abstain_below: float = 0.0,
    answer_joins: bool = True,
    calibration: Calibration | None = None,
    confidence_below: float = 0.0,
) -> None:
    """Fill `result.answers` from the top path and put them first among the candidates;
    with its alignment (`align_assign` of its word-to-hop `scalars`, align.path_scalars;
    None when not computed or a relation is opaque) below `abstain_below`, or with a top
    path that joins several topic entities and not `answer_joins`, abstain: the same
    answers lead the candidates, and `answers` stays empty. The confidence is the top
    path's softmax weight, or `calibration`'s probability over the ranking's signals (a
    zero-shot ranking's), which abstains too below `confidence_below`."""
    if not ranked:
        return
    ids = answer_set(ranked[0].path, topics)
    await book.ensure(ids)
    named = [e for e in order_answers(ids, book.names) if book.names.get(e) != UNNAMED]
    top = [AnswerEntity(book.get(e), e) for e in named]
    first = {a.id for a in top}
    result.candidates = top + [c for c in result.candidates if c.id not in first]
    alignment = None if scalars is None else scalars["align_assign"]
    if calibration is not None:
        conf = calibration(signals(ranked, scalars, len(named)))
    else:
        conf = confidence(ranked)
    join = not answer_joins and len(set(ranked[0].path.entity_list)) > 1
    unaligned = alignment is not None and alignment < abstain_below
    unsure = calibration is not None and conf < confidence_below
    result.abstained = join or unaligned or unsure
    result.answers = [] if result.abstained else top
    note = JOIN_NOTE if join else ABSTAIN_NOTE if unaligned else LOW_CONFIDENCE_NOTE
    entry = {
        "stage": "ranker",
        "note": note if result.abstained else RANKER_NOTE,
        "confidence": round(conf, 4),
        "answer_set_size": len(named),
    }
    if alignment is not None:
        entry.update(alignment=round(alignment, 4), abstain_below=abstain_below)
    if calibration is not None:
        entry.update(confidence_kind="calibrated", confidence_below=confidence_below)
    result.trace.append(entry)
