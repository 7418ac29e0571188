"""Attacks first: replies built to make the score readers slow or to smuggle in names.

A reply is untrusted input. The readers must stay linear in its length (a hostile or broken
endpoint can send long replies), refuse replies beyond the JSON search bound with a
ParseError, and never score a name the prompt did not offer."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kgreason.llm.parse import MAX_JSON_REPLY_CHARS, ParseError
from kgreason.tog.parsing import parse_answer, parse_scores, parse_sufficient

RELS = ["location.location.containedby", "people.person.spouse_s"]

HOSTILE = [
    "a" * 90_000,  # one long line with no score tag: quadratic for a lazy regex
    "(score: 0.5)" * 7_000,  # many tags on one line
    "{" * 30_000 + "x (Score: 0.4)",
    "1. " + "x" * 60_000 + " (Score: 0.4)",
]


@pytest.mark.parametrize("n", range(len(HOSTILE)))
def test_long_hostile_replies_are_read_in_linear_time(n: int) -> None:
    # a hang guard, not a speed measurement: quadratic reading of these takes minutes
    code = (
        "from kgreason.tog.parsing import parse_scores\n"
        "from kgreason.llm.parse import ParseError\n"
        f"from tests.tog.test_hostile_replies import HOSTILE, RELS\n"
        "try:\n"
        f"    parse_scores(HOSTILE[{n}], RELS)\n"
        "except ParseError:\n"
        "    pass\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize(
    "reader", [lambda t: parse_scores(t, RELS), parse_sufficient, parse_answer]
)
def test_replies_beyond_the_bound_are_refused(reader) -> None:
    with pytest.raises(ParseError, match="too long"):
        reader("{Yes} answer: {x} " + "z" * MAX_JSON_REPLY_CHARS)


def test_names_not_offered_are_never_scored() -> None:
    smuggled = (
        '{"location.location.containedby": 0.2, "rdf:type; DROP": 0.8}\n'
        "{people.person.spouse_s; evil.relation (Score: 0.9)}"
    )
    assert parse_scores(smuggled, RELS) == {"location.location.containedby": 0.2}
    tog_form = "{evil.relation (Score: 0.9)}\n{people.person.spouse_s (Score: 0.1)}"
    assert parse_scores(tog_form, RELS) == {"people.person.spouse_s": 0.1}
