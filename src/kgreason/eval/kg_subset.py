"""`kgreason kg subset`: a small store holding what a question set needs of a big one.

For each question, the subgraph `ask` would cut (pog/subgraph.walk_subgraph: the topic
entities' D-hop neighbourhood under the same bounds and hub handling, the same noise
filter) is taken as edge ids; their union becomes a store of its own, names and inverse
pairs carried over. A walk no bound cut would be the same on the subset (its D-hop
neighbourhood there is the full one, which the subset holds); a cut walk would not (the cut
depends on rows the subset lacks), so every question's walk is recorded with the subset and
replayed there (kg/store/walks.py): `ask` and `eval` on the subset, with the settings the
subset was cut with, see each question's full-store subgraph and give its answers. The
report also says, by hop, for how many questions the gold answers' ids lie in the topic
entities' h-hop subgraph.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kgreason.eval.records import Record
from kgreason.kg.base import KGError
from kgreason.kg.loaders.memory_source import TripleSource
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store.format import Manifest
from kgreason.kg.store.walks import WalkSpool
from kgreason.pog.settings import PoGSettings
from kgreason.pog.subgraph import walk_key, walk_subgraph


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


@dataclass
class Cut:
    """What `cut` takes from the full store: the subset's edges and every question's walk."""

    eids: np.ndarray  # sorted edge ids of the subset
    walks: WalkSpool
    report: SubsetReport


def cut(
    kg: StoreKG,
    records: Sequence[Record],
    depth: int,
    settings: PoGSettings,
    spool: Path,
    *,
    tick: Callable[[int, int], None] | None = None,
) -> Cut:
    """The subset's edges (the union of the walks, as a mask over the store's edges: one
    byte per edge however much the walks overlap) and the walks, spooled in `spool`."""
    report = SubsetReport(questions=len(records))
    taken = np.zeros(kg.graph.n_edges, dtype=bool)
    walks = WalkSpool(spool)
    started = time.perf_counter()
    try:
        for i, rec in enumerate(records):
            _question(kg, rec, depth, settings, report, taken, walks)
            if tick:
                tick(i + 1, len(records))
    except BaseException:
        walks.close()
        raise
    report.seconds = time.perf_counter() - started
    return Cut(np.flatnonzero(taken), walks, report)


def _question(
    kg: StoreKG,
    rec: Record,
    depth: int,
    settings: PoGSettings,
    report: SubsetReport,
    taken: np.ndarray,
    walks: WalkSpool,
) -> None:
    """One question's walk (taken and recorded) and its gold-inside counts by hop."""
    topics = list(rec.topic_entities)
    if not (kg.node_ids(topics) >= 0).any():
        report.no_topic += 1
        return
    gold = kg.node_ids([a.id for a in rec.answers if a.id])
    gold = gold[gold >= 0] if len(gold) else gold
    if any(a.id for a in rec.answers):
        report.with_gold_ids += 1
    for h in range(1, depth + 1):
        sub, res = walk_subgraph(kg, topics, settings, depth=h)
        if h == depth:
            taken[res.eids] = True
            report.truncated += bool(sub.truncated)
            known = (kg.node_ids(list(sub.topics)) >= 0).tolist()
            walks.add(walk_key(kg, sub.topics, known, h, settings), res, sub.cut_detail)
        if len(gold):
            inside = np.isin(gold, _nodes(kg, res.eids, topics))
            report.gold_inside[h] = report.gold_inside.get(h, 0) + bool(inside.any())
            report.gold_all_inside[h] = report.gold_all_inside.get(h, 0) + bool(inside.all())


def _nodes(kg: StoreKG, eids: np.ndarray, topics: list[str]) -> np.ndarray:
    h, _, t = kg.graph.triples(np.asarray(eids, dtype=np.int64))
    ids = kg.node_ids(topics)
    return np.unique(np.concatenate([h, t, ids[ids >= 0]]))


def write(
    kg: StoreKG, taken: Cut, records: Sequence[Record], out: Path, *, force: bool
) -> Manifest:
    """The subset store: its triples, every topic entity (even one without edges), the
    names of all their nodes and the inverse pairs as the full store has them (pairs found
    on part of the triples could differ), and the questions' walks to replay."""
    try:
        return _write(kg, taken, records, out, force=force)
    finally:
        taken.walks.close()


def _write(
    kg: StoreKG, taken: Cut, records: Sequence[Record], out: Path, *, force: bool
) -> Manifest:
    eids = taken.eids
    h, r, t = kg.graph.triples(eids)
    node_ids = np.unique(np.concatenate([h, t, _topic_ids(kg, records)]))
    keys = kg.index.keys.many(node_ids)
    key_of = dict(zip(node_ids.tolist(), keys, strict=True))
    unnamed = np.asarray(kg.index.unnamed[node_ids], dtype=bool)
    labels = kg.index.labels.many(node_ids)
    names = {k: x for k, x, u in zip(keys, labels, unnamed.tolist(), strict=True) if not u}
    rels = kg.relations
    present = {rels[x] for x in np.unique(r).tolist()}
    source = TripleSource(
        heads=[key_of[x] for x in h.tolist()],
        relations=[rels[x] for x in r.tolist()],
        tails=[key_of[x] for x in t.tolist()],
        names=names,
        origin={"path": str(kg.name), "fingerprint": kg.fingerprint(), "questions": len(records)},
        inverses=[
            p for p in kg.manifest.inverse_relations if {p["relation"], p["inverse"]} <= present
        ],
    )
    manifest = build_store([source], out, force=force)
    try:  # a subset without its walks would answer cut questions differently: none at all
        _check_order(kg, node_ids, (h, r, t), out)
        taken.walks.write(out, eids)
    except (OSError, ValueError, KGError) as e:
        shutil.rmtree(out, ignore_errors=True)
        raise KGError(f"{out}: recording the questions' walks failed ({e}); removed") from e
    return manifest


def _check_order(kg: StoreKG, node_ids: np.ndarray, full: tuple, out: Path) -> None:
    """The subset numbers its edges in the full store's order (nodes in key order, each
    head's edges as the full store lists them), so a recorded walk's edge ids map by rank;
    checked here over every edge rather than assumed."""
    sub = StoreKG(out, noise_prefixes=kg.noise_prefixes)
    try:
        h, r, t = sub.graph.triples(np.arange(sub.graph.n_edges, dtype=np.int64))
        ids = {x: i for i, x in enumerate(kg.relations)}
        rel_map = np.array([ids[x] for x in sub.relations] or [0], np.int64)
        same = len(h) == len(full[0]) and bool(
            (node_ids[h] == full[0]).all()
            and (rel_map[r] == full[1]).all()
            and (node_ids[t] == full[2]).all()
        )
    finally:
        sub.close()
    if not same:
        raise KGError(f"{out}: the subset's edge order differs from {kg.name}'s")


def _topic_ids(kg: StoreKG, records: Sequence[Record]) -> np.ndarray:
    ids = kg.node_ids(list(dict.fromkeys(k for rec in records for k in rec.topic_entities)))
    return ids[ids >= 0].astype(np.int64)
