"""Recall@k as eq. 3 reads it: retrieved titles deduplicated in rank order, then cut."""

from kgreason.eval.metrics import recall_at_k


def test_duplicates_take_one_slot():
    # titles of premises in rank order: A, A, C, B -> deduplicated A, C, B
    ranked = ["A", "A", "C", "B"]
    assert recall_at_k(ranked, ["A", "B"], 2) == 0.5  # top 2 = {A, C}: 1 of 2 gold
    assert recall_at_k(ranked, ["A", "B"], 3) == 1.0  # top 3 = {A, C, B}: 2 of 2
    assert recall_at_k(ranked, ["A", "A", "B"], 2) == 0.5  # gold is a set too


def test_no_retrieval_and_no_gold():
    assert recall_at_k([], ["A"], 5) == 0.0
    assert recall_at_k(["A"], [], 5) == 0.0
