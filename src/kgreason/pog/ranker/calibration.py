"""A zero-shot ranking's confidence: P(its answer is right), from what the ranking saw.

A trained ranker's scores are logits, so the softmax weight of its top path is a usable
confidence (AUROC 0.911 against correctness on the movie KG, docs/ranker.md). A zero-shot
ranking's scores are alignment sums on no common scale: their softmax had AUROC 0.69 on
PathQuestion, MetaQA and the company KG pooled with out-of-KG questions. Here a logistic
model reads the thirteen `SIGNALS` instead (the ranked scores, the top path's word-to-hop
alignment, the answer set's size); it was fitted once, on CHOOSE slices
(bench/zero_shot_calibration.py: PathQuestion questions 600-700 of each file, MetaQA dev
4300-4400 per hop, and 50 out-of-KG questions from movie templates written for fitting),
and is reported on other questions: pooled AUROC 0.908 (docs/ranker.md; refitted when the
ranking's rho became 0.2). It ranks nothing: it only says how far to trust the answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kgreason.pog.fuzzy import ScoredPath

#: every signal `signals` reads; a Calibration names those it uses
SIGNALS = (
    "softmax",
    "align",
    "top",
    "gap",
    "hops",
    "lead3",
    "answers",
    "hop_mean",
    "hop_min",
    "word_cov",
    "word_min",
    "repeat",
    "words",
)
#: align.path_scalars' names of the word-to-hop signals
_SCALARS = {
    "align": "align_assign",
    "hop_mean": "align_hop_mean",
    "hop_min": "align_hop_min",
    "word_cov": "align_word_cov",
    "word_min": "align_word_min",
    "repeat": "repeat_relation",
    "words": "word_count",
}


def confidence(ranked: Sequence[ScoredPath]) -> float:
    """Softmax weight of the first path among `ranked`: a trained ranker's confidence
    (its scores are logits), and one of the signals below."""
    if not ranked:
        return 0.0
    s = np.array([r.score for r in ranked], dtype=np.float64)
    e = np.exp(s - s.max())
    return float(e[0] / e.sum())


def signals(
    ranked: Sequence[ScoredPath], scalars: Mapping[str, float] | None, answers: int = 0
) -> dict[str, float]:
    """What the ranking saw, per `SIGNALS`. Of the ranked paths: softmax (the top path's
    softmax weight), top (its score), gap (its lead over the second path), lead3 (over the
    mean of the next three), hops (its length). Of the top path's word-to-hop alignment
    (align.path_scalars; all 0 when None): align (one-to-one), hop_mean / hop_min (how well
    its hops are asked for), word_cov / word_min (how well the question's words are
    answered), repeat (relations used twice), words (content words). answers: log(1 + the
    answer set's size), which the answer stage has counted anyway."""
    if not ranked:
        return dict.fromkeys(SIGNALS, 0.0)
    scores = [float(r.score) for r in ranked]
    top = scores[0]
    sc = scalars or {}
    return {
        "softmax": confidence(ranked),
        "top": top,
        "gap": top - scores[1] if len(scores) > 1 else abs(top),
        "lead3": top - float(np.mean(scores[1:4])) if len(scores) > 1 else abs(top),
        "hops": float(ranked[0].path.length),
        "answers": math.log1p(answers),
        **{k: float(sc.get(v, 0.0)) for k, v in _SCALARS.items()},
    }


@dataclass(frozen=True)
class Calibration:
    """Logistic regression over standardised signals (`names`, a subset of `SIGNALS`)."""

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    std: tuple[float, ...]
    names: tuple[str, ...] = ("softmax", "align", "top", "gap", "hops")

    def __post_init__(self) -> None:
        sizes = {len(self.weights), len(self.mean), len(self.std), len(self.names)}
        if len(sizes) != 1 or not set(self.names) <= set(SIGNALS):
            raise ValueError(f"calibration: {len(self.names)} signals {self.names} mismatched")

    def __call__(self, sig: Mapping[str, float]) -> float:
        z = sum(
            w * (sig[k] - m) / sd
            for w, k, m, sd in zip(self.weights, self.names, self.mean, self.std, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-(z + self.bias)))


#: the order-aligned ranking's (static words), printed by bench/zero_shot_calibration.py
ORDER_ALIGNED = Calibration(
    weights=(0.6297, -0.534, 1.1623, -0.079, 0.3165, 1.3368, -0.8828, 0.7122, 0.038,
             -0.4907, 0.501, -0.279, 0.0755),
    bias=2.3434,
    mean=(0.1162, 0.5493, 1.0351, 0.2908, 2.1987, 0.4647, 1.5393, 0.7095, 0.6412, 0.5987,
          0.4147, 0.4547, 2.8453),
    std=(0.0901, 0.2899, 0.7079, 0.235, 0.7584, 0.2774, 1.3003, 0.2631, 0.3096, 0.2701,
         0.3598, 0.647, 1.0571),
    names=SIGNALS,
)  # fmt: skip
