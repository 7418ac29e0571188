"""Training/evaluation questions from kgreason's dataset loaders, topics resolved to KG ids,
and the template split (no masked question shared between train and validation)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from kgreason.eval.datasets import load
from kgreason.eval.records import Record
from kgreason.kg.base import KnowledgeGraph
from kgreason.pog.ranker.supervision import TrainQuestion


class RankerDataError(ValueError):
    """Training data that cannot be used (unknown dataset, nothing resolvable)."""


async def resolve_topics(kg: KnowledgeGraph, record: Record) -> tuple[str, ...] | None:
    """KG ids of the record's topic entities: ids the KG knows, else an exact name match."""
    out = []
    for key, name in record.topic_entities.items():
        if (await kg.names([key])).get(key) is not None:
            out.append(key)
            continue
        hits = await kg.search(name, limit=1, fuzzy=False)
        if not hits:
            return None
        out.append(hits[0].id)
    return tuple(dict.fromkeys(out)) or None


async def load_questions(
    kg: KnowledgeGraph,
    dataset: str,
    *,
    split: str | None = None,
    hops: Sequence[int] = (1, 2, 3),
    data_dir: str | Path | None = None,
    limit: int | None = None,
    dropped: list[str] | None = None,
) -> tuple[list[TrainQuestion], int]:
    """(questions whose topics resolve, number skipped). `limit` is per hop count; the
    skipped questions' texts are appended to `dropped` (eval/trained.py records them)."""
    out: list[TrainQuestion] = []
    skipped = 0
    seen: dict[tuple, tuple[str, ...] | None] = {}
    for h in hops:
        records = load(dataset, split=split, hops=h, root=data_dir).records
        for r in records[:limit] if limit else records:
            key = tuple(r.topic_entities.items())
            if key not in seen:
                seen[key] = await resolve_topics(kg, r)
            topics = seen[key]
            if topics is None or not r.answers:
                skipped += 1
                if dropped is not None:
                    dropped.append(r.question)
                continue
            gold = tuple(a for ans in r.answers for a in ans.surface_forms())
            mentions = tuple(dict.fromkeys([*r.topic_entities.values(), *r.topic_entities]))
            out.append(TrainQuestion(r.id, r.question, mentions, topics, gold, r.hops or h))
    return out, skipped


def template_split(
    questions: Sequence[TrainQuestion], *, valid_fraction: float = 0.2, seed: int = 0
) -> tuple[list[int], list[int]]:
    """Indices (train, validation): each masked template goes wholly to one side, chosen
    by a seeded hash, so validation questions are phrased in ways training never saw."""

    def side(template: str) -> bool:
        h = hashlib.sha256(f"{seed}\x00{template}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2**64 < valid_fraction

    train: list[int] = []
    valid: list[int] = []
    for i, q in enumerate(questions):
        (valid if side(q.template) else train).append(i)
    return train, valid
