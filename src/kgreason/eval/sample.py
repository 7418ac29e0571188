"""A seeded random sample of a dataset's questions (`kgreason eval --sample N --seed S`).

The PoG paper evaluates CWQ on "a random sample of 1,000 test cases" (Appendix C, Table 10)
and its ablations on 500 random questions (section 5.2); the sample itself was not published,
so `--sample 1000 --seed 0` reproduces the procedure, not the paper's exact questions.

Deterministic across runs, platforms and Python versions: the records are ordered by id (then
by position, for datasets that repeat an id), and a partial Fisher-Yates shuffle draws from
`random.Random(seed).random()` only: the one method whose sequence Python guarantees for a
given seed (`Random.sample` and `randrange` have changed between versions). The chosen records
keep their dataset order, so `--limit` after `--sample` takes the first of them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from kgreason.eval.records import Record


def sample_indices(ids: Sequence[str], n: int, seed: int) -> list[int]:
    """Positions (ascending) of min(n, len(ids)) records drawn at random with `seed`."""
    if n < 0:
        raise ValueError(f"sample size must be >= 0, not {n}")
    order = sorted(range(len(ids)), key=lambda i: (ids[i], i))
    k = min(n, len(order))
    rng = random.Random(seed)
    for j in range(k):  # partial Fisher-Yates: order[:k] becomes the sample
        r = j + int(rng.random() * (len(order) - j))
        order[j], order[r] = order[r], order[j]
    return sorted(order[:k])


def sample_records(records: Sequence[Record], n: int, seed: int) -> list[Record]:
    """min(n, len(records)) records drawn at random with `seed`, in dataset order."""
    return [records[i] for i in sample_indices([r.id for r in records], n, seed)]
