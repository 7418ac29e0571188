"""ToG's reply readers on the shapes models produce, and a typed error on garbage."""

from __future__ import annotations

import pytest

from kgreason.llm.parse import ParseError
from kgreason.tog.parsing import parse_answer, parse_scores, parse_sufficient

RELS = [
    "location.location.nearby_airports",
    "location.location.containedby",
    "people.person.spouse_s",
]


@pytest.mark.parametrize(
    "reply",
    [
        '{"location.location.nearby_airports": 0.7, "location.location.containedby": 0.3}',
        '```json\n{"location.location.nearby_airports": 0.7, "location.location.containedby": 0.3}\n```',
        'Sure! Here are my picks:\n{"location.location.nearby_airports": 0.7, '
        '"location.location.containedby": 0.3,}\nHope this helps.',
        '[{"relation": "location.location.nearby_airports", "score": 0.7}, '
        '{"relation": "location.location.containedby", "score": "0.3"}]',
        "1. {location.location.nearby_airports (Score: 0.7)}: airports near the city\n"
        "2. {location.location.containedby (Score: 0.3)}: its region",
        "{'Location.Location.Nearby_Airports': 0.7, 'location.location.containedby': 0.3}",
    ],
)
def test_scores_in_every_common_shape(reply: str) -> None:
    assert parse_scores(reply, RELS) == {
        "location.location.nearby_airports": 0.7,
        "location.location.containedby": 0.3,
    }


def test_names_not_offered_are_ignored_and_scores_clamped() -> None:
    reply = '{"film.film.directed_by": 0.9, "people.person.spouse_s": 1.4, "x": "high"}'
    assert parse_scores(reply, RELS) == {"people.person.spouse_s": 1.0}


def test_bare_numbers_in_listed_order_only_when_one_per_item() -> None:
    assert parse_scores("0.6, 0.3, 0.1", RELS) == dict(zip(RELS, [0.6, 0.3, 0.1], strict=True))
    with pytest.raises(ParseError):
        parse_scores("0.6, 0.4", RELS)


@pytest.mark.parametrize(
    "reply", ["", "I cannot help with that.", '{"nothing": 1}', "{}", "[1, 2]"]
)
def test_garbage_scores_raise(reply: str) -> None:
    with pytest.raises(ParseError):
        parse_scores(reply, RELS)


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("{Yes}. The airport is in Germany.", True),
        ("{no} — the border is missing", False),
        ("**{Yes}**", True),
        ("Yes. Enough facts.", True),
        ("No, not yet.", False),
        ("{No}. Although {Yes} might follow later.", False),
    ],
)
def test_sufficiency_verdicts(reply: str, value: bool) -> None:
    assert parse_sufficient(reply) is value


@pytest.mark.parametrize("reply", ["", "Maybe.", "The facts are interesting.", "Yesterday"])
def test_unreadable_verdicts_raise(reply: str) -> None:
    with pytest.raises(ParseError):
        parse_sufficient(reply)


@pytest.mark.parametrize(
    ("reply", "answers"),
    [
        ("Weeze is in Germany.\nanswer: {Germany}", ["Germany"]),
        ("answer: {Germany, Netherlands}", ["Germany", "Netherlands"]),
        ("{Yes}. So the answer is {Germany}.", ["Germany"]),
    ],
)
def test_answers(reply: str, answers: list[str]) -> None:
    assert parse_answer(reply) == answers


@pytest.mark.parametrize("reply", ["", "Germany", "{Yes}", "I do not know."])
def test_unreadable_answers_raise(reply: str) -> None:
    with pytest.raises(ParseError):
        parse_answer(reply)
