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

from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from kgreason.kg.base import Triple
from kgreason.kg.store.build_index import ranges
from kgreason.pog.clustering import ClusteredGraph, Key


def _csr(src: np.ndarray, rel: np.ndarray, dst: np.ndarray, n: int):
    order = np.lexsort((rel, src))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, rel[order], dst[order]


class _LazyAdj(Mapping[str, dict[Key, tuple[str, ...]]]):
    """name -> {(relation, forward): neighbour names}, built per node on first access."""

    def __init__(self, g: ArrayClusteredGraph):
        self._g = g
        self._cache: dict[int, dict[Key, tuple[str, ...]]] = {}

    def _local(self, name: object) -> int:
        u = self._g.index.get(name) if isinstance(name, str) else None  # type: ignore[arg-type]
        if u is None or self._g.degree[u] == 0:
            return -1
        return u

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
        names = self._g.names
        return (names[u] for u in np.flatnonzero(self._g.degree).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._g.degree))


class ArrayClusteredGraph(ClusteredGraph):
    """ClusteredGraph over local-id arrays; `adj` is materialised lazily (module docstring)."""

    def __init__(
        self,
        h: np.ndarray,
        r: np.ndarray,
        t: np.ndarray,
        names: np.ndarray,
        rel_names: Sequence[str],
        isolated: Iterable[str] = (),
        index: dict[str, int] | None = None,
    ):
        n = len(names)
        self.names = names  # object array of str, local id -> name
        self.index = index if index is not None else {s: i for i, s in enumerate(names.tolist())}
        self.rel_names = list(rel_names)
        self.h, self.r, self.t = h, r, t
        self.optr, self.orel, self.odst = _csr(h, r, t, n)
        self.iptr, self.irel, self.isrc = _csr(t, r, h, n)
        self.degree = np.diff(self.optr) + np.diff(self.iptr)
        self.variant = "pog"
        self.adj = _LazyAdj(self)  # type: ignore[assignment]  # a lazy Mapping in place of the dict
        self.isolated = frozenset(i for i in isolated if i not in self.adj)

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
        """h, t index `node_names` (object array); self-loops dropped, duplicates merged."""
        keep = h != t
        h, r, t = h[keep], r[keep], t[keep]
        n, m = len(node_names), max(len(rel_names), 1)
        if len(h):
            codes = np.unique((h * m + r) * n + t)
            ht, t = np.divmod(codes, n)
            h, r = np.divmod(ht, m)
        return cls(h, r, t, node_names, rel_names, isolated)

    def subgraph_entities(self, topics: Iterable[str]) -> int:
        """|QuestionSubgraph.entities()|: every node of the triples (self-loops included,
        they are kept in `names`) plus the topics outside them."""
        return len(self.names) + sum(1 for x in set(topics) if x not in self.index)

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
        index = self.index
        u = np.array([index[n] for n in nodes if n in index], dtype=np.int64)
        parts = []
        for ptr, rel, nbr, fwd in (
            (self.optr, self.orel, self.odst, 1),
            (self.iptr, self.irel, self.isrc, 0),
        ):
            pos = ranges(ptr[u], ptr[u + 1] - ptr[u])
            parts.append((rel[pos] * 2 + fwd) * len(self.names) + nbr[pos])
        codes = np.unique(np.concatenate(parts))
        key, nb = np.divmod(codes, len(self.names))
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
        return set(self.names[np.flatnonzero(self.degree)].tolist()) | set(self.isolated)

    def __contains__(self, entity: object) -> bool:
        return entity in self.adj or entity in self.isolated

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
        n = len(self.names)
        a = np.concatenate([self.h, self.t])
        b = np.concatenate([self.t, self.h])
        codes = np.unique(a * n + b)
        src, nbr = np.divmod(codes, n)
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
        return ptr, nbr

    def local_distances(self, u: int, max_depth: int, und=None) -> np.ndarray:
        """Undirected hop distance from local id u (-1 = farther than max_depth)."""
        ptr, nbr = und if und is not None else self.undirected()
        dist = np.full(len(self.names), -1, dtype=np.int64)
        dist[u] = 0
        frontier = np.array([u], dtype=np.int64)
        for d in range(1, max_depth + 1):
            if not len(frontier):
                break
            starts, ends = ptr[frontier], ptr[frontier + 1]
            lens = ends - starts
            idx = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(lens.sum())
            nb = nbr[idx]
            nb = np.unique(nb[dist[nb] < 0])
            dist[nb] = d
            frontier = nb
        return dist

    def distances(self, source: str, max_depth: int) -> dict[str, int]:
        u = self.index.get(source)
        if u is None:
            return {source: 0}
        d = self.local_distances(u, max_depth)
        hit = np.flatnonzero(d >= 0)
        return dict(zip(self.names[hit].tolist(), d[hit].tolist(), strict=True))

    def restrict_mask(self, keep: np.ndarray) -> ArrayClusteredGraph:
        """Induced subgraph on the local ids where `keep` is True (same local ids)."""
        e = keep[self.h] & keep[self.t]
        kept = self.names[np.flatnonzero(keep)].tolist()
        return ArrayClusteredGraph(
            self.h[e], self.r[e], self.t[e], self.names, self.rel_names, kept, self.index
        )

    def restrict(self, keep: Iterable[str]) -> ArrayClusteredGraph:
        mask = np.zeros(len(self.names), dtype=bool)
        ids = [self.index[k] for k in keep if k in self.index]
        mask[ids] = True
        g = self.restrict_mask(mask)
        g.isolated = g.isolated | frozenset(k for k in keep if k in self.isolated)
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


def from_store(kg: object, eids: np.ndarray, topics: Sequence[str], inverse_of: Mapping[str, str]):
    """The ArrayClusteredGraph of a store subgraph (edge ids), inverse pairs folded."""
    g = kg.graph  # type: ignore[attr-defined]
    h, r, t = g.triples(eids)
    h, r, t = (
        np.asarray(h, dtype=np.int64),
        np.asarray(r, dtype=np.int64),
        np.asarray(t, dtype=np.int64),
    )
    keep = fold_inverse_arrays(h, r, t, kg.relations, inverse_of)  # type: ignore[attr-defined]
    h, r, t = h[keep], r[keep], t[keep]
    nodes, inv = np.unique(np.concatenate([h, t]), return_inverse=True)
    names = np.empty(len(nodes), dtype=object)
    names[:] = kg.index.keys.many(nodes)  # type: ignore[attr-defined]
    lh, lt = inv[: len(h)], inv[len(h) :]
    return ArrayClusteredGraph.from_arrays(lh, r, lt, names, kg.relations, topics)  # type: ignore[attr-defined]


def prune_dead_ends_mask(
    g: ArrayClusteredGraph, keep: np.ndarray, topics: np.ndarray
) -> np.ndarray:
    """Non-topic nodes with fewer than two distinct kept neighbours removed repeatedly (the
    unique fixed point of reduction._prune_dead_ends), one vectorised round at a time."""
    keep = keep.copy()
    ptr, nbr = g.undirected()
    src = np.repeat(np.arange(len(g.names)), np.diff(ptr))
    protected = np.zeros(len(keep), dtype=bool)
    protected[topics] = True
    while True:
        live = keep[src] & keep[nbr]
        deg = np.bincount(src[live], minlength=len(keep))
        drop = keep & ~protected & (deg < 2)
        if not drop.any():
            return keep
        keep &= ~drop
