"""A path's answer-set size and set sizes read off an array search's ids (Hop.count_answers,
Hop.side; the ranker's features use them) are what decoding the names gives, for one and
two topic entities, topics inside the sets included, and for plain hops."""

from __future__ import annotations

import random

import numpy as np
from tests.pog.synth_graphs import synth_graphs, two_hops_from

from kgreason.pog.arrays.hops import LazyHop
from kgreason.pog.paths import find_entity_paths
from kgreason.pog.ranker.supervision import answer_set, answer_size
from kgreason.pog.types import Hop, ReasoningPath


def _plain(p: ReasoningPath) -> ReasoningPath:
    return ReasoningPath(
        tuple(Hop(h.src, h.relation, h.dst, h.forward, (), h.alt_relations) for h in p.hops),
        p.entity_list,
    )


def test_answer_size_and_set_size_without_names():
    fast, slow, names, deg = synth_graphs(n=2000, mirror=200)
    nodes = [str(names[i]) for i in np.flatnonzero(deg > 0)]
    rng = random.Random(5)
    hub = str(names[int(np.argmax(deg))])
    searches = [find_entity_paths(fast, [hub], min_len=1, max_len=3, max_paths=400)]
    for _ in range(6):
        a = rng.choice(nodes)
        searches.append(
            find_entity_paths(
                fast, [a, two_hops_from(slow, a, rng, nodes)], min_len=1, max_len=4, max_paths=300
            )
        )
    checked = inside = 0
    for res in searches:
        topics = list(res.entity_list)
        for extra in ([], [rng.choice(nodes)], ["not a node"]):
            for p in list(res.paths)[::3]:
                assert all(isinstance(h, LazyHop) for h in p.hops)
                want = len(answer_set(_plain(p), [*topics, *extra]))
                assert answer_size(p, [*topics, *extra]) == want
                # (from the ids: not answer_size's fallback to the decoded sets)
                assert p.hops[0].count_answers(p.hops, [*topics, *extra], len(topics) == 1) == want
                assert answer_size(_plain(p), [*topics, *extra]) == want
                assert [len(h.side(True)) for h in p.hops] == [len(h.dst) for h in _plain(p).hops]
                inside += any(t in h.dst for t in [*topics, *extra] for h in p.hops)
                checked += 1
    assert checked > 300 and inside  # topics were inside some counted sets
