"""The same skewed synthetic KG as an array graph and as a set graph, for the tests that
check the array search against the set-based one."""

from __future__ import annotations

import numpy as np

from kgreason.kg.base import Triple
from kgreason.kg.synthetic import synth_kg
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.clustering import ClusteredGraph


def synth_graphs(n: int = 6_000, seed: int = 11, *, mirror: int = 0):
    """(array graph, set graph, node names, node degrees). `mirror` > 0 adds a parallel
    relation ("zz_mirror") reversing the first `mirror` edges, so relation clustering has
    keys to group."""
    kg = synth_kg(n, seed=seed)
    names = np.array([kg.entity(i) for i in range(kg.n_nodes)], dtype=object)
    h, r, t = (x.astype(np.int64) for x in (kg.h, kg.r, kg.t))
    rels = list(kg.rel_names)
    if mirror:
        h, t = np.concatenate([h, t[:mirror]]), np.concatenate([t, h[:mirror]])
        r = np.concatenate([r, np.full(mirror, len(rels))])
        rels.append("zz_mirror")
    fast = ArrayClusteredGraph.from_arrays(h, r, t, names, rels)
    slow = ClusteredGraph.from_triples(
        Triple(names[a], rels[b], names[c]) for a, b, c in zip(h, r, t, strict=True)
    )
    deg = np.bincount(np.concatenate([h, t]), minlength=len(names))
    return fast, slow, names, deg


def two_hops_from(slow: ClusteredGraph, a: str, rng, nodes) -> str:
    """A random node two undirected hops from `a` (through a random neighbour), or any
    node when that neighbour has none: a second topic that a path can reach."""
    near = sorted(slow.neighbors_undirected(rng.choice(sorted(slow.neighbors_undirected(a)))))
    return rng.choice(near) if near else rng.choice(nodes)


def scrambled_graph(n: int = 3_000, seed: int = 5) -> ArrayClusteredGraph:
    """The array graph of a synthetic KG whose names do not follow its ids (e{i * 7919 mod
    100003}): local ids in name order differ from the generator's order."""
    kg = synth_kg(n, seed=seed)
    names = np.array([f"e{(i * 7919) % 100_003}" for i in range(kg.n_nodes)], dtype=object)
    h, r, t = (x.astype(np.int64) for x in (kg.h, kg.r, kg.t))
    return ArrayClusteredGraph.from_arrays(h, r, t, names, list(kg.rel_names))
