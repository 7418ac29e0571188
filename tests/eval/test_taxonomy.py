"""PoG Appendix B.3's error types on rows built by hand, one per rule, plus the report."""

from __future__ import annotations

import pytest

from kgreason.eval.taxonomy import (
    ANSWER_GENERATION,
    FORMAT,
    HALLUCINATION,
    REFUSE,
    RUN_ERROR,
    classify,
    is_refusal,
    markdown_section,
    taxonomy,
)

PATHS = [[["m.nij", "location.location.nearby_airports", "m.wee"],
          ["m.wee", "location.location.containedby", "m.ger"]]]  # fmt: skip
NAMES = {"m.nij": "Nijmegen", "m.wee": "Weeze Airport", "m.ger": "Germany"}


def row(**kw) -> dict:
    base = {"gold": ["Germany"], "answers": ["Belgium"], "strict_hit1": False,
            "error_kind": None, "paths": [], "names": {}}  # fmt: skip
    return {**base, **kw}


@pytest.mark.parametrize(
    ("r", "expected"),
    [
        (row(strict_hit1=True, answers=["Germany"]), None),
        (row(correct=True), None),
        (row(error_kind="llm-unreadable-reply", answers=[]), (FORMAT, "llm-unreadable-reply")),
        (row(error_kind="unparseable_reply"), (FORMAT, "unparseable_reply")),
        (row(error_kind="kg-error", answers=[]), (RUN_ERROR, "kg-error")),
        (row(error_kind="llm-budget-exceeded"), (RUN_ERROR, "llm-budget-exceeded")),
        (row(answers=[]), (REFUSE, "no answer")),
        (row(answers=["  "]), (REFUSE, "no answer")),
        (row(answers=["Unknown"]), (REFUSE, "refused")),
        (row(answers=["Cannot be determined from the given paths"]), (REFUSE, "refused")),
        (
            row(answers=["Netherlands"], paths=PATHS, names=NAMES),
            (ANSWER_GENERATION, "gold on paths"),
        ),
        (row(answers=["Belgium"]), (HALLUCINATION, "no path")),
        (
            row(gold=["France"], answers=["Belgium"], paths=PATHS, names=NAMES),
            (HALLUCINATION, "gold not on paths"),
        ),
    ],
)
def test_each_rule(r: dict, expected):
    assert classify(r) == expected


def test_refusals_are_whole_answers_not_words_inside_names():
    assert is_refusal("None") and is_refusal("I don't know") and is_refusal("N/A")
    assert not is_refusal("Unknown Pleasures")  # an album title... starts with "Unknown "
    assert not is_refusal("Nonetheless Records") and not is_refusal("Germany")


def test_counts_in_the_papers_order_and_the_markdown():
    rows = [
        row(strict_hit1=True, answers=["Germany"]),
        row(answers=["Netherlands"], paths=PATHS, names=NAMES),
        row(answers=["Netherlands"], paths=PATHS, names=NAMES),
        row(answers=["None"]),
        row(error_kind="llm-unreadable-reply"),
        row(),
    ]
    assert taxonomy(rows) == {
        ANSWER_GENERATION: {"gold on paths": 2},
        REFUSE: {"refused": 1},
        FORMAT: {"llm-unreadable-reply": 1},
        HALLUCINATION: {"no path": 1},
    }
    md = "\n".join(markdown_section("run", rows))
    assert "| answer generation error | gold on paths | 2 |" in md
    assert "no wrong answer" in "\n".join(markdown_section("run", rows[:1]))
