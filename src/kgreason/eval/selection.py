"""Which of a dataset's questions a run evaluates: the trained-on questions left out (or
kept, flagged), then the seeded sample, then the first N of each hop count. What was
chosen goes into config.json, so the tables can say it and --resume can hold to it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kgreason.eval.records import Record
from kgreason.eval.sample import sample_records
from kgreason.eval.trained import RankerUse, split_trained

EXCLUDE = "exclude"
INCLUDE = "include"


@dataclass
class Selection:
    records: list[Record]
    #: questions loaded (before anything was left out)
    loaded: int
    #: "exclude" / "include" when the ranker records its training questions, else None
    policy: str | None = None
    #: questions left out of the pool (policy "exclude"): trained on, or drawn and dropped
    excluded: int = 0
    #: of those, the ones it was trained on
    excluded_trained: int = 0
    #: trained-on questions among those evaluated (policy "include")
    trained_in_run: int = 0


def first_n(records: Sequence[Record], limit: int | None, per_hop: bool) -> list[Record]:
    """The first `limit` records, of each hop count with `per_hop` (several --hops), so
    `--hops 1,2,3 --limit 20` is 20 questions per hop, as `train ranker --limit` is."""
    if not limit:
        return list(records)
    if not per_hop:
        return list(records[:limit])
    taken: dict[int | None, int] = defaultdict(int)
    out = []
    for r in records:
        if taken[r.hops] < limit:
            taken[r.hops] += 1
            out.append(r)
    return out


def select(
    records: Sequence[Record],
    ranker: RankerUse | None,
    *,
    include_trained: bool,
    sample: int | None,
    seed: int,
    limit: int | None,
    per_hop: bool = False,
) -> Selection:
    """Exclusion comes first, so `--limit 20` is 20 questions the ranker never saw."""
    trained = ranker.trained if ranker is not None else None
    pool = list(records)
    sel = Selection([], len(pool))
    if trained is not None:
        kept, drawn = split_trained(pool, trained)
        sel.policy = INCLUDE if include_trained else EXCLUDE
        if not include_trained:
            pool, sel.excluded = kept, len(drawn)
            sel.excluded_trained = sum(r in trained for r in drawn)
    if sample is not None:
        pool = sample_records(pool, sample, seed)
    sel.records = first_n(pool, limit, per_hop)
    if trained is not None and include_trained:
        sel.trained_in_run = sum(r in trained for r in sel.records)
    return sel


def trained_config(sel: Selection, ranker: RankerUse | None) -> dict[str, Any] | None:
    """config.json's "trained_questions": the policy and its counts (None: no trained ranker)."""
    if ranker is None or ranker.trained_on is None:
        return None
    if sel.policy is None:
        return {"policy": "unchecked", "why": ranker.unchecked}
    return {
        "policy": sel.policy,
        "loaded": sel.loaded,
        "excluded": sel.excluded,
        "excluded_trained": sel.excluded_trained,
        "in_run": sel.trained_in_run,
        "evaluated": len(sel.records),
    }


def parse_hops(dataset: str, given: str | int | list[int] | None) -> tuple[list[int] | None, bool]:
    """(the hop counts to load, whether that is the dataset's default). `given` is --hops
    ("2", "1,2,3", "all") or a recorded config value; None for a dataset not split by hops."""
    from kgreason.eval.datasets import default_hop, hop_counts

    counts = hop_counts(dataset)
    if not counts:
        return None, False
    if given is None:
        return [default_hop(dataset) or counts[0]], True
    if isinstance(given, int):
        hops = [given]
    elif isinstance(given, list):
        hops = [int(h) for h in given]
    elif given.strip().lower() == "all":
        hops = list(counts)
    else:
        try:
            hops = [int(h) for h in given.split(",") if h.strip()]
        except ValueError:
            raise ValueError(f"--hops: expected 1, 1,2,3 or all; got {given!r}") from None
    bad = [h for h in hops if h not in counts]
    if bad or not hops:
        shown = ", ".join(map(str, counts))
        raise ValueError(f"--hops: {dataset} has {shown}-hop questions, not {given!r}")
    return list(dict.fromkeys(hops)), False
