"""Weak supervision from the KG: candidate paths per question, labelled against gold answers.

For each training question (text, topic entities, gold answers) the candidate relation paths
are what the LLM-free mode ranks: clustered paths from kgreason's own graph stages
(`supplement_paths`: 1 <= length <= |Topic| * D_max, entity paths through every topic entity
for multi-entity questions). Each path's answer set (`answer_set`) is compared with the gold
names: F1 of the two sets, hit (any gold member), first_hit (the first answer shown is gold).

Speed: cutting and clustering a subgraph per question costs ~0.3 s on MetaQA; when the KG is
small enough to hold (a store or MemoryKG), the WHOLE KG is clustered once and searched per
topic instead. The search then sees everything the per-question subgraph holds (on 40/40
MetaQA topics checked, the same paths); unlike the per-question subgraph it is never
truncated. Paths are cached per topic tuple (MetaQA asks ~1.7 questions per topic entity).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kgreason.kg.base import KnowledgeGraph, Triple
from kgreason.kg.ranking import normalize_answer
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.graph import prepare_graph
from kgreason.pog.paths import supplement_paths
from kgreason.pog.ranker.features import (
    SCALARS,
    encode_slots,
    mask_question,
    path_keys,
    path_scalars,
)
from kgreason.pog.ranker.order import reading_keys
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import ReasoningPath

#: whole-KG clustering above this many triples would not fit comfortably in memory
WHOLE_GRAPH_MAX_TRIPLES = 3_000_000
#: cached candidate paths (all topics together) before the per-topic caches start over: on a
#: 1M-triple KG a topic has thousands of paths and generated questions rarely share a
#: topic, so a cache bounded by topic count alone grew past 8.9 GB in 7 minutes
MAX_CACHED_PATHS = 300_000


@dataclass(frozen=True)
class TrainQuestion:
    id: str
    text: str
    #: topic mentions as written (masked in the features)
    mentions: tuple[str, ...]
    topic_ids: tuple[str, ...]
    gold: tuple[str, ...]
    hops: int = 0

    @property
    def template(self) -> str:
        """The question with its topic masked: questions sharing it share a template."""
        return mask_question(self.text, self.mentions).lower()


def answer_set(path: ReasoningPath, topics: Sequence[str]) -> tuple[str, ...]:
    """The entities a path answers: its end set for one topic entity; for a path joining
    several, the non-topic entities along it (hop order). Topics are left out, unless a
    one-topic path ends at its own topic only: it returned there (the search's
    `revisit_when_empty`, pog/paths.py), which is then the answer. A path from one topic
    of a several-topic question that ends at another topic found that topic, not an
    answer."""
    skip = set(topics)
    if len(set(path.entity_list)) <= 1:
        ids: Iterable[str] = path.end_entities()
        if ids and all(e in path.entity_list for e in ids):
            return tuple(dict.fromkeys(ids))
    else:
        ids = [e for h in path.hops for e in h.dst]
    return tuple(e for e in dict.fromkeys(ids) if e not in skip)


def answer_size(path: ReasoningPath, topics: Sequence[str]) -> int:
    """len(answer_set(path, topics)), without decoding the names of an array search's sets
    (a 10M hub question's 20,000 paths: scoring them decoded every end set, ~1.2 s)."""
    hops = path.hops
    one = len(set(path.entity_list)) <= 1
    got = hops[0].count_answers(hops, topics, one) if hops else None
    # none but topics at the end: the few names decide whether the path returned to its own
    return len(answer_set(path, topics)) if got is None or (one and got == 0) else got


def order_answers(ids: Sequence[str], names: dict[str, str]) -> list[str]:
    """Members of one answer set share the path's score; show them by name (stable)."""

    def key(e: str) -> tuple[str, str]:
        return names.get(e, e).lower(), e

    return sorted(ids, key=key)


def first_answer(ids: Sequence[str], names: dict[str, str]) -> str | None:
    """order_answers(ids, names)[0] without sorting the whole set."""

    def key(e: str) -> tuple[str, str]:
        return names.get(e, e).lower(), e

    return min(ids, key=key) if ids else None


def set_f1(got: frozenset[str] | set[str], gold: set[str]) -> tuple[float, bool]:
    """(F1 of normalised answer names vs normalised gold names, any gold member)."""
    inter = sum(1 for g in gold if g in got)
    if not inter:
        return 0.0, False
    p, r = inter / len(got), inter / len(gold)
    return 2 * p * r / (p + r), True


def all_triples(kg: KnowledgeGraph) -> list[Triple] | None:
    """Every triple of an in-process KG (store or MemoryKG), None for remote ones or when too
    large to cluster whole."""
    graph = getattr(kg, "graph", None)
    if graph is not None and hasattr(kg, "triples_of"):
        n = int(kg.manifest.counts.get("triples", 0))  # type: ignore[attr-defined]
        if n > WHOLE_GRAPH_MAX_TRIPLES:
            return None
        return list(kg.triples_of(np.arange(n, dtype=np.int64)))  # type: ignore[attr-defined]
    triples = getattr(kg, "_triples", None)
    if triples is not None and len(triples) <= WHOLE_GRAPH_MAX_TRIPLES:
        return list(triples)
    return None


class PathEnumerator:
    """Candidate paths per topic tuple, cached; whole-KG search when possible."""

    def __init__(self, kg: KnowledgeGraph, settings: PoGSettings, *, whole: bool = True):
        self.kg = kg
        self.settings = settings
        triples = all_triples(kg) if whole else None
        self.whole = (
            ClusteredGraph.from_triples(triples, keep_self_loops=settings.revisits())
            if triples is not None
            else None
        )
        self._cache: dict[tuple[str, ...], list[ReasoningPath]] = {}
        self._cached = 0

    async def paths(self, topics: Sequence[str]) -> list[ReasoningPath]:
        key = tuple(dict.fromkeys(topics))
        if key in self._cache:
            return self._cache[key]
        s = self.settings
        if self.whole is not None:
            graph = self.whole
        else:
            graph = (await prepare_graph(self.kg, key, s, keep_self_loops=s.revisits())).graph
        # a list: a search's TablePaths would keep its whole question graph in the cache
        found = list(
            supplement_paths(
                graph,
                list(key),
                n_topics=len(key),
                d_max=s.d_max,
                max_paths=s.max_paths,
                max_level_rows=s.max_level_rows,
                revisit_when_empty=s.revisits(),
            ).paths
        )
        if len(self._cache) > 50_000 or self._cached + len(found) > MAX_CACHED_PATHS:
            self._cache, self._cached = {}, 0
        self._cache[key] = found
        self._cached += len(found)
        return found


@dataclass
class SupervisedSet:
    """Questions and their labelled candidates, flattened (candidates of question i are rows
    offsets[i]:offsets[i+1])."""

    questions: list[TrainQuestion]
    masked: list[str]
    offsets: np.ndarray
    rel: np.ndarray
    sign: np.ndarray
    scalars: np.ndarray
    f1: np.ndarray
    hit: np.ndarray
    first_hit: np.ndarray
    vocab: list[str]
    kg_name: str = ""
    kg_fingerprint: str = ""
    meta: dict = field(default_factory=dict)
    #: rel / sign of each hop as read forward when it can be (order.reading_keys): what the
    #: order-aware alignment reads; None in sets labelled before it (then rel / sign)
    read_rel: np.ndarray | None = None
    read_sign: np.ndarray | None = None

    def readings(self) -> tuple[np.ndarray, np.ndarray]:
        """(read_rel, read_sign), or (rel, sign) for a set labelled without them."""
        if self.read_rel is None or self.read_sign is None:
            return self.rel, self.sign
        return self.read_rel, self.read_sign

    def __len__(self) -> int:
        return len(self.questions)

    def candidates(self, i: int) -> slice:
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def positive(self) -> np.ndarray:
        """Per question: has at least one candidate with a gold answer."""
        return np.array([self.hit[self.candidates(i)].any() for i in range(len(self))], bool)

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for q in self.questions:
            h.update(f"{q.id}\t{q.text}\t{'|'.join(q.topic_ids)}\t{'|'.join(q.gold)}\n".encode())
        return h.hexdigest()

    def save(self, path: Path) -> None:
        base = str(path).removesuffix(".npz")
        arrays: dict[str, np.ndarray] = {
            "offsets": self.offsets,
            "rel": self.rel,
            "sign": self.sign,
            "scalars": self.scalars,
            "f1": self.f1,
            "hit": self.hit,
            "first_hit": self.first_hit,
        }
        if self.read_rel is not None and self.read_sign is not None:
            arrays.update(read_rel=self.read_rel, read_sign=self.read_sign)
        np.savez_compressed(base + ".npz", **arrays)  # type: ignore[arg-type]
        side = {
            "questions": [q.__dict__ for q in self.questions],
            "masked": self.masked,
            "vocab": self.vocab,
            "kg_name": self.kg_name,
            "kg_fingerprint": self.kg_fingerprint,
            "meta": self.meta,
        }
        Path(base + ".json").write_text(json.dumps(side))

    @classmethod
    def load(cls, path: Path) -> SupervisedSet:
        base = str(path).removesuffix(".npz")
        z = np.load(base + ".npz")
        side = json.loads(Path(base + ".json").read_text())
        qs = [
            TrainQuestion(
                q["id"],
                q["text"],
                tuple(q["mentions"]),
                tuple(q["topic_ids"]),
                tuple(q["gold"]),
                q["hops"],
            )
            for q in side["questions"]
        ]
        return cls(
            qs,
            side["masked"],
            z["offsets"],
            z["rel"],
            z["sign"],
            z["scalars"],
            z["f1"],
            z["hit"],
            z["first_hit"],
            side["vocab"],
            side["kg_name"],
            side["kg_fingerprint"],
            side["meta"],
            z["read_rel"] if "read_rel" in z.files else None,
            z["read_sign"] if "read_sign" in z.files else None,
        )


async def supervise(
    kg: KnowledgeGraph,
    questions: Sequence[TrainQuestion],
    settings: PoGSettings,
    *,
    enumerator: PathEnumerator | None = None,
    progress: Callable[[int], None] | None = None,
) -> SupervisedSet:
    """Label every candidate path of every question (see the module docstring)."""
    enum = enumerator or PathEnumerator(kg, settings)
    vocab: dict[str, int] = {}
    names: dict[str, str] = {}
    normed: dict[str, str] = {}
    sort_key: dict[str, str] = {}  # order_answers' key as one string (C-level min)
    by_key: dict[str, str] = {}
    offsets = [0]
    rels, signs, scal, f1s, hits, firsts = [], [], [], [], [], []
    read_rels, read_signs = [], []
    # per topic tuple: each path's normalised answer names and first shown answer
    per_topic: dict[tuple[str, ...], list[tuple[frozenset[str], str | None, int]]] = {}
    held = 0  # paths described in per_topic
    for n, q in enumerate(questions):
        paths = await enum.paths(q.topic_ids)
        if q.topic_ids not in per_topic:
            answers = [answer_set(p, q.topic_ids) for p in paths]
            todo = [e for e in dict.fromkeys(e for a in answers for e in a) if e not in names]
            if todo:
                got = await kg.names(todo)
                for e in todo:
                    names[e] = got.get(e, e)
                    normed[e] = normalize_answer(names[e])
                    k = sort_key[e] = f"{names[e].lower()}\x00{e}"
                    by_key[k] = e
            held += len(answers)
            if len(per_topic) > 20_000 or held > MAX_CACHED_PATHS:
                per_topic, held = {}, len(answers)
            per_topic[q.topic_ids] = [
                (
                    frozenset(map(normed.__getitem__, a)),
                    normed[by_key[min(map(sort_key.__getitem__, a))]] if a else None,
                    len(a),
                )
                for a in answers
            ]
        gold = {normalize_answer(g) for g in q.gold}
        r, s = encode_slots([path_keys(p) for p in paths], vocab)
        rels.append(r)
        signs.append(s)
        r, s = encode_slots([reading_keys(p) for p in paths], vocab)
        read_rels.append(r)
        read_signs.append(s)
        for p, (got_set, first, size) in zip(paths, per_topic[q.topic_ids], strict=True):
            f, h = set_f1(got_set, gold)
            f1s.append(f)
            hits.append(h)
            firsts.append(first is not None and first in gold)
            scal.append(path_scalars(p, size, len(q.topic_ids)))
        offsets.append(offsets[-1] + len(paths))
        if progress is not None:
            progress(n + 1)
    n_scalars = len(SCALARS)
    return SupervisedSet(
        list(questions),
        [mask_question(q.text, q.mentions) for q in questions],
        np.array(offsets, dtype=np.int64),
        np.concatenate(rels) if rels else np.zeros((0, 3), np.int64),
        np.concatenate(signs) if signs else np.zeros((0, 3), np.float32),
        np.vstack(scal) if scal else np.zeros((0, n_scalars), np.float32),
        np.array(f1s, dtype=np.float32),
        np.array(hits, dtype=bool),
        np.array(firsts, dtype=bool),
        sorted(vocab, key=vocab.__getitem__),
        kg_name=getattr(kg, "name", ""),
        kg_fingerprint=kg.fingerprint(),
        read_rel=np.concatenate(read_rels) if read_rels else np.zeros((0, 3), np.int64),
        read_sign=np.concatenate(read_signs) if read_signs else np.zeros((0, 3), np.float32),
    )


def concat_sets(sets: Sequence[SupervisedSet]) -> SupervisedSet:
    """One set from several labelled on the same KG (relation indexes remapped)."""
    vocab: dict[str, int] = {}
    rels, reads, offsets = [], [], [np.zeros(1, np.int64)]
    for s in sets:
        remap = np.array([vocab.setdefault(r, len(vocab)) for r in s.vocab] + [-1], np.int64)
        rels.append(remap[s.rel])  # -1 (empty slot) indexes the trailing -1
        reads.append(remap[s.readings()[0]])
        offsets.append(s.offsets[1:] + offsets[-1][-1])
    first = sets[0]
    return SupervisedSet(
        [q for s in sets for q in s.questions],
        [m for s in sets for m in s.masked],
        np.concatenate(offsets),
        np.concatenate(rels),
        np.concatenate([s.sign for s in sets]),
        np.concatenate([s.scalars for s in sets]),
        np.concatenate([s.f1 for s in sets]),
        np.concatenate([s.hit for s in sets]),
        np.concatenate([s.first_hit for s in sets]),
        sorted(vocab, key=vocab.__getitem__),
        first.kg_name,
        first.kg_fingerprint,
        {"parts": [s.meta for s in sets]},
        np.concatenate(reads),
        np.concatenate([s.readings()[1] for s in sets]),
    )
