"""Label-free training questions, generated from a KG's own triples.

A user's KG comes with no labelled questions, so the ranker's training questions are made
from the KG: sampled topic entities, sampled 1-3-hop relation walks from them (set
semantics: hop k follows one (relation, direction) from every entity reached at hop k-1, as
PoG's paths do), verbalised from the relation names with varied templates. The gold answers
are the walk's end set, so the existing weak supervision (`supervision.supervise`) labels the
candidate paths exactly as it labels a dataset's questions. Two-topic questions come from
intersections: an entity x reached from A by one relation and from B by another gives "the
r1 of [A] and the r2 of [B]" with gold = the intersection of the two sets.

Walks whose answer set is empty (only the topic) or wider than `max_answers` are dropped: a
question whose answer is "a third of the KG" teaches nothing about which relation was meant.
Deterministic for a given seed; nothing but the triples and names is read.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kgreason.kg.base import Triple
from kgreason.pog.ranker.features import relation_text
from kgreason.pog.ranker.supervision import TrainQuestion

Key = tuple[str, bool]  # (relation, forward)

# noun phrases: {np} is the phrase so far (the topic's "[name]" at the start), {r} the hop
FORWARD = ("the {r} of {np}", "{np} 's {r}", "{r} of {np}")
BACKWARD = ("what has {r} {np}", "the one whose {r} is {np}", "things with {r} {np}")
# whole questions around the final noun phrase
WRAPPERS = ("what is {np}", "which is {np}", "who is {np}", "name {np}", "{np}", "what are {np}")
TWO_TOPIC = (
    "what is the {r1} of {a} and the {r2} of {b}",
    "which {r1} of {a} is also {r2} of {b}",
    "what is both {a} 's {r1} and {b} 's {r2}",
)


@dataclass(frozen=True)
class SynthConfig:
    #: questions per hop count (and, for two_topic > 0, that share of them with two topics)
    per_hop: int = 1500
    hops: tuple[int, ...] = (1, 2, 3)
    two_topic: float = 0.15
    max_answers: int = 30
    #: walks give up on a hop whose frontier grows past this (hubs)
    max_frontier: int = 200
    seed: int = 0


class Adjacency:
    """entity -> {(relation, forward): neighbours}, both directions, from a triple list."""

    def __init__(self, triples: Iterable[Triple]):
        adj: dict[str, dict[Key, list[str]]] = defaultdict(lambda: defaultdict(list))
        for t in triples:
            adj[t.head][(t.relation, True)].append(t.tail)
            adj[t.tail][(t.relation, False)].append(t.head)
        self.adj = {e: {k: sorted(set(v)) for k, v in d.items()} for e, d in adj.items()}
        self.entities = sorted(self.adj)

    def keys(self, e: str) -> list[Key]:
        return sorted(self.adj.get(e, {}))

    def follow(self, frontier: Sequence[str], key: Key, cap: int) -> list[str] | None:
        """Every neighbour of the frontier through `key` (None past `cap`)."""
        out: dict[str, None] = {}
        for e in frontier:
            for n in self.adj.get(e, {}).get(key, ()):
                out[n] = None
            if len(out) > cap:
                return None
        return sorted(out)


def verbalise(keys: Sequence[Key], mention: str, rng: random.Random) -> str:
    np_ = mention
    for rel, fwd in keys:
        np_ = rng.choice(FORWARD if fwd else BACKWARD).format(r=relation_text(rel), np=np_)
    return rng.choice(WRAPPERS).format(np=np_) + rng.choice(("?", " ?", ""))


def _walk(
    g: Adjacency, topic: str, hops: int, cfg: SynthConfig, rng: random.Random
) -> tuple[tuple[Key, ...], list[str], str] | None:
    frontier = [topic]
    keys: list[Key] = []
    for _ in range(hops):
        options = g.keys(rng.choice(frontier))
        if not options:
            return None
        key = rng.choice(options)
        nxt = g.follow(frontier, key, cfg.max_frontier)
        if not nxt:
            return None
        keys.append(key)
        frontier = nxt
    answers = [e for e in frontier if e != topic]
    if not answers or len(answers) > cfg.max_answers:
        return None
    return tuple(keys), answers, topic


def _two_topic(
    g: Adjacency, cfg: SynthConfig, rng: random.Random
) -> tuple[str, Key, str, Key, list[str]] | None:
    """(A, key from A, B, key from B, answers): x reached from A and from B."""
    x = rng.choice(g.entities)
    incoming = [(k, n) for k, ns in g.adj[x].items() for n in ns[:50]]
    if len(incoming) < 2:
        return None
    (ka, a), (kb, b) = rng.sample(incoming, 2)
    if a == b or ka[0] == kb[0]:
        return None
    fa, fb = (ka[0], not ka[1]), (kb[0], not kb[1])  # from A (B) to x
    sa = g.follow([a], fa, cfg.max_frontier) or []
    sb = set(g.follow([b], fb, cfg.max_frontier) or [])
    answers = [e for e in sa if e in sb and e not in (a, b)]
    if not answers or len(answers) > cfg.max_answers:
        return None
    return a, fa, b, fb, answers


@dataclass(frozen=True)
class Sampled:
    """One sampled question before it has words: topics, the walk, the answer ids."""

    topics: tuple[str, ...]
    #: the walk from the one topic; with two topics, the key from each to the answer
    keys: tuple[Key, ...]
    answers: tuple[str, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return (*self.topics, *self.answers)


def sample(
    triples: Iterable[Triple],
    cfg: SynthConfig,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[Sampled]:
    """Sampled walks and intersections (see the module docstring), distinct, in hop order."""
    g = Adjacency(triples)
    if not g.entities:
        return []
    rng = random.Random(cfg.seed)
    total = cfg.per_hop * len(cfg.hops)
    out: list[Sampled] = []
    seen: set[Sampled] = set()
    for h in cfg.hops:
        want_two = round(cfg.per_hop * cfg.two_topic) if h == 2 else 0
        got = tries = 0
        while got < cfg.per_hop and tries < 30 * cfg.per_hop:
            tries += 1
            if got < want_two:
                two = _two_topic(g, cfg, rng)
                if two is None:
                    continue
                a, fa, b, fb, answers = two
                item = Sampled((a, b), (fa, fb), tuple(answers))
            else:
                walk = _walk(g, rng.choice(g.entities), h, cfg, rng)
                if walk is None:
                    continue
                item = Sampled((walk[2],), walk[0], tuple(walk[1]))
            if item in seen:
                continue
            seen.add(item)
            out.append(item)
            got += 1
            if progress is not None:
                progress(len(out), total)
    return out


def questions(
    sampled: Sequence[Sampled], names: dict[str, str], seed: int = 0
) -> list[TrainQuestion]:
    """Each sample in words, with gold answer names; an id without a name is shown as itself."""
    rng = random.Random(seed)
    out: list[TrainQuestion] = []
    for i, s in enumerate(sampled):
        mentions = tuple(names.get(t) or t for t in s.topics)
        gold = tuple(names.get(e) or e for e in s.answers)
        if len(s.topics) == 2:
            (ra, _), (rb, _) = s.keys
            text = rng.choice(TWO_TOPIC).format(
                r1=relation_text(ra),
                r2=relation_text(rb),
                a=f"[{mentions[0]}]",
                b=f"[{mentions[1]}]",
            )
        else:
            text = verbalise(s.keys, f"[{mentions[0]}]", rng)
        out.append(TrainQuestion(f"synth-{i}", text, mentions, s.topics, gold, len(s.keys)))
    return out
