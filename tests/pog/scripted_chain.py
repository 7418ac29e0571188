"""A scripted PoG "LLM" that knows one question's relation chain (tests and bench).

Shared by tests/pog/test_e2e_datasets.py and bench/pog_llm_calls.py: the model reads the
question's chain (as a model reading the question would) and takes every entity from the
paths it is shown (see scripted_pog).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tests.pog.scripted_pog import (
    analysis_reply,
    answer_from,
    evaluate_when,
    follows,
    node_sets,
    prefix_match,
    select_by,
    summarize_first,
)

from kgreason.llm.testing import Responder, ScriptedLLM


def chain_llm(
    question: str, topic_name: str, chain: Sequence[str], *, fallbacks: bool = False
) -> ScriptedLLM:
    """Replies for a question whose answer is `chain`'s relations followed from the topic.

    Without `fallbacks` only the topic-entity-path stages have replies (any other stage
    fails the run); with it, "supplement" and "final_answer" answer too (for benchmarks,
    which must finish every question).
    """
    rels = list(chain)
    parts = [f'"{topic_name}"']
    for i, r in enumerate(rels):
        parts += [r.replace("_", " "), "answer(the answer)" if i == len(rels) - 1 else f"x{i}"]

    def exact(path: str) -> bool:
        return follows(path, rels)

    replies: dict[str, Sequence[str] | Responder] = {
        "question_analysis": [analysis_reply([question], " - ".join(parts))],
        "precise_select": select_by(prefix_match(rels)),
        "summarise": summarize_first,
        "evaluate": evaluate_when(exact),
        "answer": answer_from(lambda p: node_sets(p)[-1] if exact(p) else None),
    }
    if fallbacks:
        supplement = json.dumps(
            [{"predicted": topic_name, "indicator": f'answer("{topic_name}") - r - x'}]
        )
        replies["supplement"] = lambda m: supplement
        replies["final_answer"] = answer_from(lambda p: node_sets(p)[-1])
    return ScriptedLLM(replies)
