from kgreason.eval.metrics import (
    any_hit,
    exact_match,
    f1,
    lenient_hit,
    normalize_answer,
    recall_at_k,
    strict_hit,
)
from kgreason.eval.records import Answer

GERMANY = [Answer("Germany", "m.0345h", aliases=["Federal Republic of Germany"])]


def test_normalize():
    assert normalize_answer("The  Netherlands!") == "netherlands"
    assert normalize_answer("united_kingdom") == "united kingdom"


def test_strict_uses_first_answer_and_aliases():
    assert strict_hit(["germany"], GERMANY)
    assert strict_hit(["Federal Republic of Germany"], GERMANY)
    assert not strict_hit(["France", "Germany"], GERMANY)
    assert not strict_hit([], GERMANY)
    assert any_hit(["France", "Germany"], GERMANY)


def test_strict_vs_lenient_differ():
    output = "Nijmegen is in the Netherlands, next to Germany; the answer is {Netherlands}."
    # the lenient (paper-compatible) check finds "germany" in the reasoning text
    assert lenient_hit(output, GERMANY)
    # strict scoring looks only at the answer given
    assert not strict_hit(["Netherlands"], GERMANY)


def test_lenient_substring_both_ways_and_empty():
    assert lenient_hit("Germ", GERMANY)  # output contained in gold: ToG counts it
    assert not lenient_hit("", GERMANY)
    assert not lenient_hit("France", GERMANY)


def test_em_f1():
    gold = [Answer("Ridley Scott")]
    assert exact_match("ridley scott.", gold) == 1.0
    assert f1("Sir Ridley Scott", gold) == 0.8
    assert f1("James Cameron", gold) == 0.0


def test_recall_at_k():
    assert recall_at_k(["a", "b", "c"], ["b", "d"], 2) == 0.5
    assert recall_at_k(["a"], [], 2) == 0.0
