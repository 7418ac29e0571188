"""Node and relation clustering of the question subgraph (PoG section 4.1, "graph pruning").

Node clustering: every edge that shares (entity, relation, direction) is one clustered edge
to the SET of entities on the other side, `{e} -> r -> {e1, e2, ...}`. The graph is stored as
that grouping, `adj[e][(relation, forward)] -> tuple of neighbours` (unordered), so a path
step is "one relation in one direction" and the number of paths grows with relation
sequences, not with entities.

How a path continues from a supernode set (used by paths.py and expand.py): the next hop from
a set S via key (r, forward) reaches the union over members of S of their r-neighbours in that
direction; the hop keeps the concrete triples between the members and what they reach.

Relation clustering and PoG-E: the relations joining the same two entities (in either
direction) form one clustered edge between them; in path search, relations joining the same
two SETS are one hop (paths.py, `Hop.alt_relations`). PoG-E (section 5: "randomly selects one
relation from each edge in the clustered question subgraph") keeps ONE relation per entity
pair, chosen by a random generator seeded with (seed, entity pair), so the choice is
reproducible, independent of triple order, and changes with the seed. Plain PoG keeps every
relation.

Self-loops: dropped by default (the graph PoG's exploration and the bundled ranker know).
In a KG keyed by names a self-loop is a fact ("Believe" -tracks-> "Believe": the album has
the title track) that PathQuestion's gold chains read ("the tracks of [Believe]'s tracks",
from the topic with Budget.revisit_when_empty: pog/paths.py), so the graph keeps them when
asked (`keep_self_loops`; prepare_graph asks when revisits are on): an entity with
(e, r, e) then has e among both its (r, forward) and (r, backward) neighbours.

API:
    ClusteredGraph.from_triples(triples, *, variant="pog", seed=0, isolated=(),
                                keep_self_loops=False) -> ClusteredGraph
    g.keys(nodes) -> sorted [(relation, forward)] leaving any node of `nodes`
    g.step(nodes, key, exclude=()) -> set of entities reached
    g.hop_triples(src, key, dst) -> tuple[Triple, ...]
    g.neighbors_undirected(v) -> set[str];  g.entities();  g.triples();  g.clustered_edge_count()
    g.restrict(keep_entities) -> ClusteredGraph (induced subgraph)
    pog_e_sample(triples, seed) -> list[Triple]
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from kgreason.kg.base import Triple

#: (relation, forward): forward=True means member -relation-> neighbour in the KG.
Key = tuple[str, bool]


def triple_of(src: str, key: Key, dst: str) -> Triple:
    rel, forward = key
    return Triple(src, rel, dst) if forward else Triple(dst, rel, src)


def _pair_rng(seed: int, a: str, b: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}\x00{a}\x00{b}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def pog_e_sample(triples: Iterable[Triple], seed: int) -> list[Triple]:
    """PoG-E: for each entity pair joined by several relations keep one, chosen at random.

    The pair is unordered (relations in both directions form one clustered edge). The random
    choice depends only on (seed, pair) and the sorted candidates, so it is reproducible.
    """
    by_pair: dict[tuple[str, str], list[Triple]] = defaultdict(list)
    for t in set(triples):
        a, b = (t.head, t.tail) if t.head <= t.tail else (t.tail, t.head)
        by_pair[(a, b)].append(t)
    out: list[Triple] = []
    for (a, b), ts in sorted(by_pair.items()):
        if len(ts) == 1:
            out.append(ts[0])
        else:
            ts.sort()
            out.append(ts[_pair_rng(seed, a, b).randrange(len(ts))])
    return out


@dataclass
class ClusteredGraph:
    """The question subgraph grouped into clustered edges (see module docstring)."""

    adj: dict[str, dict[Key, tuple[str, ...]]] = field(default_factory=dict)
    variant: Literal["pog", "pog-e"] = "pog"
    #: entities kept even without edges (topic entities of an empty neighbourhood)
    isolated: frozenset[str] = frozenset()

    @classmethod
    def from_triples(
        cls,
        triples: Iterable[Triple],
        *,
        variant: Literal["pog", "pog-e"] = "pog",
        seed: int = 0,
        isolated: Iterable[str] = (),
        keep_self_loops: bool = False,
    ) -> ClusteredGraph:
        ts: Iterable[Triple] = pog_e_sample(triples, seed) if variant == "pog-e" else set(triples)
        # plain dicts and lists: this runs on every question over up to ~10^5 triples.
        # Neighbour order is irrelevant (every consumer builds sets or sorts), so no sort here.
        groups: dict[str, dict[Key, list[str]]] = {}
        for t in ts:
            h, r, tl = t.head, t.relation, t.tail
            if h == tl and not keep_self_loops:
                continue  # (module docstring, "Self-loops")
            for node, key, other in ((h, (r, True), tl), (tl, (r, False), h)):
                g = groups.get(node)
                if g is None:
                    g = groups[node] = {}
                lst = g.get(key)
                if lst is None:
                    g[key] = [other]
                else:
                    lst.append(other)
        adj = {e: {k: tuple(v) for k, v in ks.items()} for e, ks in groups.items()}
        return cls(adj=adj, variant=variant, isolated=frozenset(isolated) - adj.keys())

    def entities(self) -> set[str]:
        return set(self.adj) | set(self.isolated)

    def entity_count(self) -> int:
        return len(self.entities())

    def __contains__(self, entity: object) -> bool:
        return entity in self.adj or entity in self.isolated

    def triples(self) -> set[Triple]:
        return {
            Triple(e, rel, n)
            for e, ks in self.adj.items()
            for (rel, fwd), ns in ks.items()
            if fwd
            for n in ns
        }

    def triple_count(self) -> int:
        return sum(len(ns) for ks in self.adj.values() for (_, fwd), ns in ks.items() if fwd)

    def clustered_edge_count(self) -> int:
        """Number of clustered edges: (entity, relation, direction) groups, each counted from
        its head side, i.e. forward groups plus backward groups (both sides are supernodes)."""
        return sum(len(ks) for ks in self.adj.values())

    def keys(self, nodes: Iterable[str]) -> list[Key]:
        out: set[Key] = set()
        for n in nodes:
            out.update(self.adj.get(n, {}))
        return sorted(out)

    def expand_all(self, nodes: Iterable[str]) -> dict[Key, set[str]]:
        """Every clustered step from a set in one pass: key -> entities reached."""
        out: dict[Key, set[str]] = defaultdict(set)
        for n in nodes:
            for k, ns in self.adj.get(n, {}).items():
                out[k].update(ns)
        return out

    def step(self, nodes: Iterable[str], key: Key, exclude: Iterable[str] = ()) -> set[str]:
        out: set[str] = set()
        for n in nodes:
            out.update(self.adj.get(n, {}).get(key, ()))
        out.difference_update(exclude)
        return out

    def hop_triples(self, src: Iterable[str], key: Key, dst: Iterable[str]) -> tuple[Triple, ...]:
        dst_set = set(dst)
        return tuple(
            sorted(
                triple_of(s, key, d)
                for s in src
                for d in self.adj.get(s, {}).get(key, ())
                if d in dst_set
            )
        )

    def neighbors_undirected(self, v: str) -> set[str]:
        out: set[str] = set()
        for ns in self.adj.get(v, {}).values():
            out.update(ns)
        return out

    def restrict(self, keep: Iterable[str]) -> ClusteredGraph:
        """Induced subgraph on `keep` (an edge survives when both ends are kept)."""
        keep_set = set(keep) & self.entities()
        adj: dict[str, dict[Key, tuple[str, ...]]] = {}
        for e in keep_set:
            ks = self.adj.get(e)
            if not ks:
                continue
            sub = {k: tuple(n for n in ns if n in keep_set) for k, ns in ks.items()}
            sub = {k: ns for k, ns in sub.items() if ns}
            if sub:
                adj[e] = sub
        return ClusteredGraph(
            adj=adj, variant=self.variant, isolated=frozenset(keep_set - adj.keys())
        )
