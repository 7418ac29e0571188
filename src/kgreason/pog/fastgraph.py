"""The clustered question subgraph on integer arrays, for local stores (issue 15).

Why: building `ClusteredGraph` from Triple objects costs Python work per edge (and GC
pauses) for every triple of a 10^5-triple subgraph, although path search only ever looks at
the nodes within D_max - 1 hops of a topic. `ArrayClusteredGraph` keeps the subgraph as two
CSR arrays (out-edges grouped by (node, relation), in-edges likewise) over local ids, and
builds a node's `{(relation, forward): neighbours}` entry only when something asks for it
(`adj` is a lazy mapping). Whole-graph operations (sizes, BFS distances, reduction's
dead-end pruning, induced subgraphs) are vectorised numpy. It is a drop-in
`ClusteredGraph`: same answers, same API (tests compare them).

API:
    ArrayClusteredGraph.from_arrays(h, r, t, node_names, rel_names, isolated=()) -> graph
    g.distances(name, max_depth) -> dict[str, int];  g.reduce_mask(...) (see reduction.py)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kgreason.kg.base import Triple
from kgreason.kg.store.build_index import ranges
from kgreason.pog.clustering import ClusteredGraph, Key

if TYPE_CHECKING:
    from kgreason.kg.store.kg import StoreKG


def _csr(src: np.ndarray, rel: np.ndarray, dst: np.ndarray, n: int):
    order = np.lexsort((rel, src))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, rel[order], dst[order]


class NodeNames:
    """Local id -> node key, decoded on first use and kept: a question's subgraph can hold
    10^5 nodes, of which path search shows a few hundred (issue 15: names only for what is
    shown or sent to the LLM). `__getitem__` takes an int or an int array."""

    def __init__(self, n: int, decode: Callable[[np.ndarray], list[str]]):
        self._n, self._decode = n, decode
        self._cache = np.empty(n, dtype=object)
        self._have = np.zeros(n, dtype=bool)

    @classmethod
    def given(cls, names: np.ndarray) -> NodeNames:
        out = cls(len(names), lambda ids: names[ids].tolist())
        out._cache[:] = names
        out._have[:] = True
        return out

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, ids: Any) -> Any:
        if isinstance(ids, (int, np.integer)):
            return self[np.array([ids], dtype=np.int64)][0]
        ids = np.asarray(ids, dtype=np.int64)
        miss = ids[~self._have[ids]]
        if len(miss):  # a repeated id is decoded twice: cheaper than np.unique on every read
            self._cache[miss] = self._decode(miss)
            self._have[miss] = True
        return self._cache[ids]

    def tolist(self) -> list[str]:
        return self[np.arange(self._n)].tolist()  # type: ignore[no-any-return]


class NodeIndex(Mapping[str, int]):
    """name -> local id through `lookup` (a batch of names -> local ids, -1 = absent),
    cached per name; no dict over every node of the subgraph is built."""

    def __init__(self, names: NodeNames, lookup: Callable[[list[str]], np.ndarray]):
        self._names, self._lookup = names, lookup
        self._cache: dict[str, int] = {}

    def many(self, keys: Sequence[str]) -> np.ndarray:
        todo = [k for k in dict.fromkeys(keys) if k not in self._cache]
        if todo:
            self._cache.update(zip(todo, self._lookup(todo).tolist(), strict=True))
        return np.array([self._cache[k] for k in keys], dtype=np.int64)

    def get(self, key: object, default: Any = None) -> Any:
        if not isinstance(key, str):
            return default
        u = int(self.many([key])[0])
        return default if u < 0 else u

    def __getitem__(self, key: str) -> int:
        u = self.get(key)
        if u is None:
            raise KeyError(key)
        return u  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._names.tolist())

    def __len__(self) -> int:
        return len(self._names)


def _dict_lookup(names: np.ndarray) -> Callable[[list[str]], np.ndarray]:
    index = {s: i for i, s in enumerate(names.tolist())}
    return lambda keys: np.array([index.get(k, -1) for k in keys], dtype=np.int64)


class _LazyAdj(Mapping[str, dict[Key, tuple[str, ...]]]):
    """name -> {(relation, forward): neighbour names}, built per node on first access."""

    def __init__(self, g: ArrayClusteredGraph):
        self._g = g
        self._cache: dict[int, dict[Key, tuple[str, ...]]] = {}

    def _local(self, name: object) -> int:
        u = self._g.index.get(name)
        if u is None or self._g.degree[u] == 0:
            return -1
        return int(u)

    def __getitem__(self, name: str) -> dict[Key, tuple[str, ...]]:
        u = self._local(name)
        if u < 0:
            raise KeyError(name)
        got = self._cache.get(u)
        if got is None:
            got = self._cache[u] = self._g.entry(u)
        return got

    def __contains__(self, name: object) -> bool:
        return self._local(name) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._g.names[np.flatnonzero(self._g.degree)].tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._g.degree))


class ArrayClusteredGraph(ClusteredGraph):
    """ClusteredGraph over local-id arrays; `adj` is materialised lazily (module docstring).

    Local ids follow the string order of the node keys, so a sorted id array is a sorted
    name list (path search sorts sets on ids). `present` marks the nodes that belong to the
    graph (an induced subgraph keeps the local ids of its parent); `extra` holds topic names
    outside the store subgraph (isolated)."""

    def __init__(
        self,
        h: np.ndarray,
        r: np.ndarray,
        t: np.ndarray,
        names: NodeNames,
        rel_names: Sequence[str],
        index: NodeIndex,
        present: np.ndarray | None = None,
        extra: frozenset[str] = frozenset(),
    ):
        n = len(names)
        self.names, self.index = names, index
        self.rel_names = list(rel_names)
        self.h, self.r, self.t = h, r, t
        self.optr, self.orel, self.odst = _csr(h, r, t, n)
        self.iptr, self.irel, self.isrc = _csr(t, r, h, n)
        self.degree = np.diff(self.optr) + np.diff(self.iptr)
        self.present = present if present is not None else np.ones(n, dtype=bool)
        self.extra = frozenset(x for x in extra if x not in index)
        self.variant = "pog"
        self.adj = _LazyAdj(self)  # type: ignore[assignment]  # a lazy Mapping in place of the dict
        self._rel_rank: np.ndarray | None = None
        self._rank_rel: np.ndarray | None = None
        self._keys: dict[int, Key] = {}

    @property  # type: ignore[override]
    def isolated(self) -> frozenset[str]:  # a dataclass field on the base class
        lone = np.flatnonzero(self.present & (self.degree == 0))
        return frozenset(self.names[lone].tolist()) | self.extra

    @isolated.setter
    def isolated(self, value: frozenset[str]) -> None:
        raise AttributeError("ArrayClusteredGraph.isolated is derived from `present`")

    @classmethod
    def from_arrays(
        cls,
        h: np.ndarray,
        r: np.ndarray,
        t: np.ndarray,
        node_names: np.ndarray,
        rel_names: Sequence[str],
        isolated: Iterable[str] = (),
    ) -> ArrayClusteredGraph:
        """h, t index `node_names` (object array of str); ids are relabelled in name order,
        self-loops dropped, duplicates merged."""
        order = np.argsort(node_names, kind="stable")
        relabel = np.empty(len(order), dtype=np.int64)
        relabel[order] = np.arange(len(order))
        names = node_names[order]
        nn = NodeNames.given(names)
        return cls.build(
            relabel[h], r, relabel[t], nn, rel_names, NodeIndex(nn, _dict_lookup(names)), isolated
        )

    @classmethod
    def build(
        cls,
        h: np.ndarray,
        r: np.ndarray,
        t: np.ndarray,
        names: NodeNames,
        rel_names: Sequence[str],
        index: NodeIndex,
        isolated: Iterable[str] = (),
    ) -> ArrayClusteredGraph:
        keep = h != t
        h, r, t = h[keep], r[keep], t[keep]
        n, m = len(names), max(len(rel_names), 1)
        if len(h):
            codes = np.unique((h * m + r) * n + t)
            ht, t = np.divmod(codes, n)
            h, r = np.divmod(ht, m)
        g = cls(h, r, t, names, rel_names, index)
        isolated = list(isolated)
        ids = index.many(isolated)
        g.present = g.degree > 0
        g.present[ids[ids >= 0]] = True  # a topic with only self-loops is still an entity
        g.extra = frozenset(x for x, u in zip(isolated, ids.tolist(), strict=True) if u < 0)
        return g

    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def rel_rank(self) -> np.ndarray:
        """Rank of each relation id by name: key code rank*2 + forward sorts like (name, fwd)."""
        if self._rel_rank is None:
            order = sorted(range(len(self.rel_names)), key=self.rel_names.__getitem__)
            self._rel_rank = np.empty(len(order), dtype=np.int64)
            self._rel_rank[order] = np.arange(len(order))
        return self._rel_rank

    def key_of(self, code: int) -> Key:
        """The (relation, forward) of a key code (see rel_rank)."""
        got = self._keys.get(code)
        if got is None:
            if self._rank_rel is None:
                self._rank_rel = np.argsort(self.rel_rank)
            got = self._keys[code] = (
                self.rel_names[int(self._rank_rel[code >> 1])],
                bool(code & 1),
            )
        return got

    def subgraph_entities(self, topics: Iterable[str]) -> int:
        """|QuestionSubgraph.entities()|: every node of the triples (self-loops included,
        they are kept in `names`) plus the topics outside them."""
        return self.n + sum(1 for x in set(topics) if x not in self.index)

    def entity_count(self) -> int:
        return int(np.count_nonzero(self.present)) + len(self.extra)

    # --- lazily materialised per node -------------------------------------------------
    def _groups(self, ptr, rels, nbrs, u: int, fwd: bool, out: dict) -> None:
        a, b = int(ptr[u]), int(ptr[u + 1])
        if a == b:
            return
        rs = rels[a:b]
        cuts = np.flatnonzero(rs[1:] != rs[:-1]) + 1
        starts = [0, *cuts.tolist()]
        ends = [*cuts.tolist(), b - a]
        ns = self.names[nbrs[a:b]].tolist()
        rel_names = self.rel_names
        for s, e in zip(starts, ends, strict=True):
            out[(rel_names[int(rs[s])], fwd)] = tuple(ns[s:e])

    def entry(self, u: int) -> dict[Key, tuple[str, ...]]:
        out: dict[Key, tuple[str, ...]] = {}
        self._groups(self.optr, self.orel, self.odst, u, True, out)
        self._groups(self.iptr, self.irel, self.isrc, u, False, out)
        return out

    def expand_all(self, nodes: Iterable[str]) -> dict[Key, set[str]]:
        """ClusteredGraph.expand_all; a large set in one vectorised gather (per key, not per
        member or edge), a small one through the cached per-node entries."""
        nodes = nodes if isinstance(nodes, (set, frozenset, list, tuple)) else list(nodes)
        if len(nodes) <= 8:
            return super().expand_all(nodes)
        u = self.index.many(list(nodes))
        u = u[u >= 0]
        parts = []
        for ptr, rel, nbr, fwd in (
            (self.optr, self.orel, self.odst, 1),
            (self.iptr, self.irel, self.isrc, 0),
        ):
            pos = ranges(ptr[u], ptr[u + 1] - ptr[u])
            parts.append((rel[pos] * 2 + fwd) * self.n + nbr[pos])
        codes = np.unique(np.concatenate(parts))
        key, nb = np.divmod(codes, self.n)
        cuts = np.flatnonzero(key[1:] != key[:-1]) + 1
        starts, ends = [0, *cuts.tolist()], [*cuts.tolist(), len(key)]
        names = self.names[nb].tolist()
        rel_names = self.rel_names
        out: dict[Key, set[str]] = {}
        for a, b in zip(starts, ends, strict=True):
            k = int(key[a])
            out[(rel_names[k >> 1], bool(k & 1))] = set(names[a:b])
        return out

    # --- whole-graph operations, vectorised ------------------------------------------
    def entities(self) -> set[str]:
        return set(self.names[np.flatnonzero(self.present)].tolist()) | set(self.extra)

    def __contains__(self, entity: object) -> bool:
        if entity in self.extra:
            return True
        u = self.index.get(entity)
        return u is not None and bool(self.present[u])

    def triples(self) -> set[Triple]:
        nm = self.names
        return set(
            map(
                Triple,
                nm[self.h].tolist(),
                [self.rel_names[x] for x in self.r.tolist()],
                nm[self.t].tolist(),
            )
        )

    def triple_count(self) -> int:
        return len(self.h)

    def clustered_edge_count(self) -> int:
        def groups(src: np.ndarray, rel: np.ndarray) -> int:
            return len(np.unique(src * max(len(self.rel_names), 1) + rel))

        return groups(self.h, self.r) + groups(self.t, self.r)

    def undirected(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct undirected neighbour pairs (both orientations), CSR: (ptr, nbr)."""
        n = self.n
        a = np.concatenate([self.h, self.t])
        b = np.concatenate([self.t, self.h])
        codes = np.unique(a * n + b)
        src, nbr = np.divmod(codes, n)
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
        return ptr, nbr

    def undirected_cached(self) -> tuple[np.ndarray, np.ndarray]:
        if getattr(self, "_und", None) is None:
            self._und = self.undirected()
        return self._und

    def local_distances(self, u: int, max_depth: int, und=None) -> np.ndarray:
        """Undirected hop distance from local id u (-1 = farther than max_depth)."""
        ptr, nbr = und if und is not None else self.undirected()
        dist = np.full(self.n, -1, dtype=np.int64)
        dist[u] = 0
        frontier = np.array([u], dtype=np.int64)
        for d in range(1, max_depth + 1):
            if not len(frontier):
                break
            nb = nbr[ranges(ptr[frontier], ptr[frontier + 1] - ptr[frontier])]
            nb = np.unique(nb[dist[nb] < 0])
            dist[nb] = d
            frontier = nb
        return dist

    def distances(self, source: str, max_depth: int) -> dict[str, int]:
        u = self.index.get(source)
        if u is None or not self.present[u]:
            return {source: 0}
        d = self.local_distances(u, max_depth)
        hit = np.flatnonzero(d >= 0)
        return dict(zip(self.names[hit].tolist(), d[hit].tolist(), strict=True))

    def restrict_mask(self, keep: np.ndarray) -> ArrayClusteredGraph:
        """Induced subgraph on the local ids where `keep` is True (same local ids)."""
        keep = keep & self.present
        e = keep[self.h] & keep[self.t]
        return ArrayClusteredGraph(
            self.h[e], self.r[e], self.t[e], self.names, self.rel_names, self.index, keep
        )

    def restrict(self, keep: Iterable[str]) -> ArrayClusteredGraph:
        keep = list(keep)
        mask = np.zeros(self.n, dtype=bool)
        ids = self.index.many(keep)
        mask[ids[ids >= 0]] = True
        g = self.restrict_mask(mask)
        g.extra = frozenset(k for k in keep if k in self.extra)
        return g


def fold_inverse_arrays(
    h: np.ndarray,
    r: np.ndarray,
    t: np.ndarray,
    rel_names: Sequence[str],
    inverse_of: Mapping[str, str],
) -> np.ndarray:
    """Mask of the edges kept by kg.inverses.fold_inverse_triples, on ids: an (h, inv, t)
    whose mirror (t, r, h) is present goes."""
    from kgreason.kg.inverses import name_pairs

    present = np.unique(r)
    names = {rel_names[i]: i for i in present.tolist()}
    pairs = name_pairs(names)
    pairs.update({k: v for k, v in inverse_of.items() if k in names})
    keep = np.ones(len(h), dtype=bool)
    ids = {names[k]: names[v] for k, v in pairs.items() if k in names and v in names}
    if not ids:
        return keep
    m = len(rel_names)
    n = int(max(h.max(initial=0), t.max(initial=0))) + 1
    codes = np.unique((h * m + r) * n + t)
    inv = np.full(m, -1, dtype=np.int64)
    inv[list(ids)] = list(ids.values())
    cand = np.flatnonzero(inv[r] >= 0)
    mirror = (t[cand] * m + inv[r[cand]]) * n + h[cand]
    keep[cand[np.isin(mirror, codes)]] = False
    return keep


def from_store(
    kg: StoreKG, eids: np.ndarray, topics: Sequence[str], inverse_of: Mapping[str, str]
) -> ArrayClusteredGraph:
    """The ArrayClusteredGraph of a store subgraph (edge ids), inverse pairs folded. Local
    ids follow the stored key order (`keys.rank`), so no name is decoded here."""
    g = kg.graph
    h, r, t = g.triples(eids)
    h, r, t = (
        np.asarray(h, dtype=np.int64),
        np.asarray(r, dtype=np.int64),
        np.asarray(t, dtype=np.int64),
    )
    keep = fold_inverse_arrays(h, r, t, kg.relations, inverse_of)
    h, r, t = h[keep], r[keep], t[keep]
    nodes, inv = np.unique(np.concatenate([h, t]), return_inverse=True)
    if kg.index.key_rank is not None:
        order = np.argsort(kg.index.key_rank[nodes], kind="stable")
    else:  # stores built before keys.rank: sort the decoded keys
        order = np.argsort(np.array(kg.index.keys.many(nodes), dtype=object), kind="stable")
    relabel = np.empty(len(nodes), dtype=np.int64)
    relabel[order] = np.arange(len(nodes))
    by_local = nodes[order]  # local id -> store node id

    def lookup(keys: list[str]) -> np.ndarray:
        gid = kg.index.lookup(keys)
        pos = np.clip(np.searchsorted(nodes, gid), 0, max(len(nodes) - 1, 0))
        ok = (gid >= 0) & (len(nodes) > 0)
        ok[ok] = nodes[pos[ok]] == gid[ok]
        return np.where(ok, relabel[pos] if len(nodes) else -1, -1)

    names = NodeNames(len(nodes), lambda ids: kg.index.keys.many(by_local[ids]))
    lh, lt = relabel[inv[: len(h)]], relabel[inv[len(h) :]]
    return ArrayClusteredGraph.build(
        lh, r, lt, names, kg.relations, NodeIndex(names, lookup), topics
    )


def prune_dead_ends_mask(
    g: ArrayClusteredGraph, keep: np.ndarray, topics: np.ndarray
) -> np.ndarray:
    """Non-topic nodes with fewer than two distinct kept neighbours removed repeatedly (the
    unique fixed point of reduction._prune_dead_ends), one vectorised round at a time."""
    keep = keep.copy()
    ptr, nbr = g.undirected()
    src = np.repeat(np.arange(g.n), np.diff(ptr))
    protected = np.zeros(len(keep), dtype=bool)
    protected[topics] = True
    while True:
        live = keep[src] & keep[nbr]
        deg = np.bincount(src[live], minlength=len(keep))
        drop = keep & ~protected & (deg < 2)
        if not drop.any():
            return keep
        keep &= ~drop
