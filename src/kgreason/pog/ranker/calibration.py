"""A zero-shot ranking's confidence: P(its answer is right), from what the ranking saw.

A trained ranker's scores are logits, so the softmax weight of its top path is a usable
confidence (AUROC 0.911 against correctness on the movie KG, docs/ranker.md). A zero-shot
ranking's scores are alignment sums on no common scale: their softmax had AUROC 0.59 on
PathQuestion, MetaQA and the company KG pooled with out-of-KG questions. Here a logistic
model reads five signals of the ranked paths instead; it was fitted once, on CHOOSE slices
(bench/zero_shot_calibration.py: PathQuestion questions 600-700 of each file, MetaQA dev
4300-4400 per hop), and is reported on other questions (docs/ranker.md). It ranks nothing:
it only says how far to trust the answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kgreason.pog.fuzzy import ScoredPath

#: the signals, in the model's order
SIGNALS = ("softmax", "align", "top", "gap", "hops")


def confidence(ranked: Sequence[ScoredPath]) -> float:
    """Softmax weight of the first path among `ranked`: a trained ranker's confidence
    (its scores are logits), and one of the signals below."""
    if not ranked:
        return 0.0
    s = np.array([r.score for r in ranked], dtype=np.float64)
    e = np.exp(s - s.max())
    return float(e[0] / e.sum())


def signals(ranked: Sequence[ScoredPath], alignment: float | None) -> dict[str, float]:
    """softmax: the top path's softmax weight among the ranked; align: its word-to-hop
    alignment (align.path_alignment); top: its score; gap: its lead over the second path;
    hops: its length. Nothing here decodes an answer set (a hub's are large)."""
    if not ranked:
        return dict.fromkeys(SIGNALS, 0.0)
    top = float(ranked[0].score)
    return {
        "softmax": confidence(ranked),
        "align": float(alignment or 0.0),
        "top": top,
        "gap": top - float(ranked[1].score) if len(ranked) > 1 else abs(top),
        "hops": float(ranked[0].path.length),
    }


@dataclass(frozen=True)
class Calibration:
    """Logistic regression over standardised `SIGNALS`."""

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    std: tuple[float, ...]

    def __call__(self, sig: Mapping[str, float]) -> float:
        z = sum(
            w * (sig[k] - m) / sd
            for w, k, m, sd in zip(self.weights, SIGNALS, self.mean, self.std, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-(z + self.bias)))


#: the order-aligned ranking's (static words), printed by bench/zero_shot_calibration.py
ORDER_ALIGNED = Calibration(
    weights=(0.2809, 0.3382, 1.0321, 0.9874, -0.08),
    bias=1.5358,
    mean=(0.1739, 0.497, 0.9764, 0.3085, 1.8971),
    std=(0.1676, 0.2903, 0.6312, 0.2494, 0.8041),
)
