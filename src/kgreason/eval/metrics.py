"""Metrics: strict Hits@1 beside the paper-compatible lenient score, accuracy, EM/F1, Recall@k
(the one implementation; SymbolLKG's multi-hop QA scores its retrieved titles with it).

Strict Hits@1 compares the system's FIRST answer, normalised SQuAD-style, for exact equality
with any gold answer or alias. The lenient score reproduces what ToG and PoG report: an answer
counts as correct when a gold string (lower-cased, spaces removed) occurs anywhere in the
model's whole output, reasoning text included, or the output occurs in a gold string. It is
always labelled "lenient (paper-compatible)" and never reported alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from kgreason.eval.records import Answer
from kgreason.kg.ranking import normalize_answer

#: the Recall@k cut-offs multi-hop QA reports (SymbolLKG Table 3)
RECALL_KS = (2, 5)


def _gold_forms(gold: Sequence[Answer]) -> list[str]:
    return [f for a in gold for f in a.surface_forms() if f]


def strict_hit(predictions: Sequence[str], gold: Sequence[Answer]) -> bool:
    """Hits@1: the first prediction equals a gold answer or alias after normalisation."""
    if not predictions:
        return False
    first = normalize_answer(predictions[0])
    return bool(first) and first in {normalize_answer(g) for g in _gold_forms(gold)}


def any_hit(predictions: Sequence[str], gold: Sequence[Answer]) -> bool:
    """Any prediction equals a gold answer or alias (for multi-answer questions)."""
    golds = {normalize_answer(g) for g in _gold_forms(gold)}
    return any(normalize_answer(p) in golds for p in predictions if normalize_answer(p))


def lenient_hit(output_text: str, gold: Sequence[Answer]) -> bool:
    """ToG/PoG's containment check over the whole output (paper-compatible, lenient)."""
    out = output_text.strip().replace(" ", "").lower()
    if not out:
        return False
    for g in _gold_forms(gold):
        ga = g.strip().replace(" ", "").lower()
        if ga and (out == ga or ga in out or out in ga):
            return True
    return False


def exact_match(prediction: str, gold: Sequence[Answer]) -> float:
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(g) for g in _gold_forms(gold)))


def f1(prediction: str, gold: Sequence[Answer]) -> float:
    """SQuAD token F1, maximised over gold answers and aliases."""
    pred_tokens = normalize_answer(prediction).split()
    best = 0.0
    for g in _gold_forms(gold):
        gold_tokens = normalize_answer(g).split()
        common = Counter(pred_tokens) & Counter(gold_tokens)
        same = sum(common.values())
        if not pred_tokens or not gold_tokens:
            score = float(pred_tokens == gold_tokens)
        elif same == 0:
            score = 0.0
        else:
            precision = same / len(pred_tokens)
            recall = same / len(gold_tokens)
            score = 2 * precision * recall / (precision + recall)
        best = max(best, score)
    return best


def recall_at_k(retrieved: Sequence[str], relevant: Sequence[str], k: int) -> float:
    """|R_k ∩ G| / |G| for one query (SymbolLKG paper eq. 3; the mean over queries is the
    reported Recall@k). `retrieved` is deduplicated in rank order before the top k are cut,
    so an item retrieved twice takes one slot; items compare exactly (multi-hop QA passes
    passage titles). No relevant items: 0.0 (callers skip such queries)."""
    gold = set(relevant)
    if not gold:
        return 0.0
    top = set(list(dict.fromkeys(retrieved))[:k])
    return len(gold & top) / len(gold)
