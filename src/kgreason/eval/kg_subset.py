"""`kgreason kg subset`: a small store holding what a question set needs of a big one.

For each question, the subgraph `ask` would cut (pog/subgraph.walk_subgraph: the topic
entities' D-hop neighbourhood under the same bounds and hub handling, the same noise
filter) is taken as edge ids; their union becomes a store of its own, names carried over.
A question whose walk was not cut by a bound sees exactly the same subgraph in the subset
(its D-hop neighbourhood there is contained in the full one, which the subset holds), so
its LLM-free answer is the same; a question whose walk was cut may not (the report counts
them). The report also says, by hop, for how many questions the gold answers' ids lie in
the topic entities' h-hop subgraph.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kgreason.eval.records import Record
from kgreason.kg.loaders.memory_source import TripleSource
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store.format import Manifest
from kgreason.pog.settings import PoGSettings
from kgreason.pog.subgraph import walk_subgraph


@dataclass
class SubsetReport:
    questions: int = 0
    #: questions none of whose topic entities the store knows
    no_topic: int = 0
    #: questions whose walk hit a bound (their subset answer may differ from the full one)
    truncated: int = 0
    #: questions with gold answer ids (names-only gold cannot be checked by id)
    with_gold_ids: int = 0
    #: hop -> questions with some gold answer id in the h-hop subgraph
    gold_inside: dict[int, int] = field(default_factory=dict)
    #: hop -> questions with every gold answer id in it
    gold_all_inside: dict[int, int] = field(default_factory=dict)
    entities: int = 0
    triples: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def cut(
    kg: StoreKG,
    records: Sequence[Record],
    depth: int,
    settings: PoGSettings,
    *,
    tick: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, SubsetReport]:
    """(sorted edge ids of the subset, report)."""
    report = SubsetReport(questions=len(records))
    parts: list[np.ndarray] = []
    started = time.perf_counter()
    for i, rec in enumerate(records):
        topics = list(rec.topic_entities)
        if not (kg.node_ids(topics) >= 0).any():
            report.no_topic += 1
            continue
        gold = kg.node_ids([a.id for a in rec.answers if a.id])
        gold = gold[gold >= 0] if len(gold) else gold
        if any(a.id for a in rec.answers):
            report.with_gold_ids += 1
        for h in range(1, depth + 1):
            sub, res = walk_subgraph(kg, topics, settings, depth=h)
            if h == depth:
                parts.append(np.asarray(res.eids, dtype=np.int64))
                report.truncated += bool(sub.truncated)
            if len(gold):
                nodes = _nodes(kg, res.eids, topics)
                inside = np.isin(gold, nodes)
                report.gold_inside[h] = report.gold_inside.get(h, 0) + bool(inside.any())
                report.gold_all_inside[h] = report.gold_all_inside.get(h, 0) + bool(inside.all())
        if tick:
            tick(i + 1, len(records))
    eids = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
    report.seconds = time.perf_counter() - started
    return eids, report


def _nodes(kg: StoreKG, eids: np.ndarray, topics: list[str]) -> np.ndarray:
    h, _, t = kg.graph.triples(np.asarray(eids, dtype=np.int64))
    ids = kg.node_ids(topics)
    return np.unique(np.concatenate([h, t, ids[ids >= 0]]))


def write(
    kg: StoreKG, eids: np.ndarray, records: Sequence[Record], out: Path, *, force: bool
) -> Manifest:
    """The subset store: its triples, every topic entity (even one without edges), and
    the names of all their nodes as the full store shows them."""
    h, r, t = kg.graph.triples(eids)
    node_ids = np.unique(np.concatenate([h, t, _topic_ids(kg, records)]))
    keys = kg.index.keys.many(node_ids)
    key_of = dict(zip(node_ids.tolist(), keys, strict=True))
    unnamed = np.asarray(kg.index.unnamed[node_ids], dtype=bool)
    labels = kg.index.labels.many(node_ids)
    names = {k: x for k, x, u in zip(keys, labels, unnamed.tolist(), strict=True) if not u}
    rels = kg.relations
    source = TripleSource(
        heads=[key_of[x] for x in h.tolist()],
        relations=[rels[x] for x in r.tolist()],
        tails=[key_of[x] for x in t.tolist()],
        names=names,
        origin={"path": str(kg.name), "fingerprint": kg.fingerprint(), "questions": len(records)},
    )
    return build_store([source], out, force=force)


def _topic_ids(kg: StoreKG, records: Sequence[Record]) -> np.ndarray:
    ids = kg.node_ids(list(dict.fromkeys(k for rec in records for k in rec.topic_entities)))
    return ids[ids >= 0].astype(np.int64)
