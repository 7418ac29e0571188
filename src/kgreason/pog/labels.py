"""The LLM-free mode's one vocabulary (issue 34), in a module that imports nothing heavy:
the CLI, the HTTP service, MCP and (through `label`) the explorer all say these words.

The label names what ranks the paths (a learned ranker that answers, or similarity that
yields candidates), so an error reads the same as a success of the same setup."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgreason.pog.types import PoGResult

#: the label every surface shows (the CLI's panel, JSON's and HTTP's `label`, MCP, `serve`'s
#: banner, the explorer), by what ranks the paths, whatever the question's outcome; and the
#: trace notes that say the same at length.
RANKER_LABEL = "LLM-free mode: a learned path ranker's answer, not PoG's"
#: a zero-shot ranking answers (pog.ranker = auto on a KG no ranker was trained on)
ZERO_SHOT_LABEL = "LLM-free mode: a zero-shot path ranking's answer, not PoG's"
SIMILARITY_LABEL = "LLM-free mode: candidates ranked by similarity, not PoG's answer"
RANKER_NOTE = (
    "LLM-free mode: a path ranker scored the paths; the answer is the top path's "
    "answer set (a path ranker's answer, not PoG's); the next paths are evidence."
)
#: what every surface says when the ranker's top path does not answer what was asked
NO_CONFIDENT_ANSWER = "no confident answer"
ABSTAIN_NOTE = (
    "LLM-free mode: no confident answer: the top path's relations do not match what the "
    "question asks (word-to-hop alignment below pog.llm_free_abstain_below); its answers "
    "are shown as candidates only."
)
#: the zero-shot ranking's top path joins several topic entities: which entity on it is
#: asked for is not something word-to-hop alignment can tell, so it does not answer
JOIN_NOTE = (
    "LLM-free mode: no confident answer: the top path joins several topic entities, and a "
    "zero-shot ranking answers questions about one; the entities on it are shown as "
    "candidates only."
)
#: a zero-shot ranking's calibrated confidence (ranker/calibration.py) is too low
LOW_CONFIDENCE_NOTE = (
    "LLM-free mode: no confident answer: the zero-shot ranking's calibrated confidence is "
    "below pog.llm_free_confidence_below; its answers are shown as candidates only."
)
SIMILARITY_NOTE = (
    "LLM-free mode: candidates are entities on the paths ranked most similar to the question; "
    "they are retrieval candidates, not an answer produced by PoG."
)


def mode_label(ranker_answers: bool, zero_shot: bool = False) -> str:
    """The label of an LLM-free run: a learned ranker or a zero-shot ranking answers, or
    similarity ranks."""
    if not ranker_answers:
        return SIMILARITY_LABEL
    return ZERO_SHOT_LABEL if zero_shot else RANKER_LABEL


def result_label(result: PoGResult) -> str | None:
    """The label of `result` (None unless LLM-free), from the run's own trace record, so
    an error says the same as a success of the same setup."""
    if result.mode != "llm-free":
        return None
    note = result.trace_record("llm-free")
    return str(note.get("label") or SIMILARITY_LABEL)
