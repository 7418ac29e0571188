"""The clustered question subgraph on integer arrays, for local stores.

Why: building `ClusteredGraph` from Triple objects costs Python work per edge (and GC
pauses) for every triple of a 10^5-triple subgraph, although path search only ever looks at
the nodes within D_max - 1 hops of a topic. `ArrayClusteredGraph` keeps the subgraph as two
CSR arrays (out-edges grouped by (node, relation), in-edges likewise) over local ids, and
builds a node's `{(relation, forward): neighbours}` entry only when something asks for it
(`adj` is a lazy mapping). Whole-graph operations (sizes, BFS distances, reduction's
dead-end pruning, induced subgraphs) are vectorised numpy (kernels in pog/arrays/csr.py). It
is a drop-in `ClusteredGraph`: same answers, same API (tests compare them).

Where the rest lives: names, the name index and the lazy `adj` view in pog/arrays/names.py, building from a store
subgraph in pog/arrays/build.py (`from_store`, `fold_inverse_arrays`), the whole-graph
reads (entities, triples, sizes, undirected neighbours, BFS distances) in
pog/arrays/graph_whole.py (`WholeGraphOps`, mixed in).

API:
    ArrayClusteredGraph.from_arrays(h, r, t, node_names, rel_names, isolated=(), *,
                                    keep_self_loops=False) -> graph
    ArrayClusteredGraph.build(h, r, t, names, rel_names, index, isolated, *,
                              keep_self_loops=False) (local ids)
    g.distances(name, max_depth) -> dict[str, int];  g.local_distances(u, max_depth)
    g.restrict_mask(keep) -> induced subgraph (reduction.py prunes dead ends on it)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.pog.arrays.csr import bits, pack, row_ptr, sort_codes, unique_codes, unpack
from kgreason.pog.arrays.graph_whole import WholeGraphOps
from kgreason.pog.arrays.names import LazyAdj, NodeIndex, NodeNames, dict_lookup
from kgreason.pog.clustering import ClusteredGraph, Key


def edge_widths(n: int, m: int) -> tuple[int, int, int]:
    """Bit widths of (head, relation, tail) in the edge codes of n nodes, m relations."""
    return bits(n), bits(m), bits(n)


class ArrayClusteredGraph(WholeGraphOps, ClusteredGraph):
    """ClusteredGraph over local-id arrays; `adj` is materialised lazily (module docstring).

    Local ids follow the string order of the node keys, so a sorted id array is a sorted
    name list (path search sorts sets on ids). `present` marks the nodes that belong to the
    graph (an induced subgraph keeps the local ids of its parent); `extra` holds topic names
    outside the store subgraph (isolated).

    The edges (h, r, t) are distinct, sorted by (h, r, t), without self-loops unless the
    builder kept them (`keep_self_loops`, as ClusteredGraph.from_triples): then they ARE
    the out-edge CSR (rows by h, grouped by relation, neighbours ascending). The in-edge CSR
    (`iptr`, `irel`, `isrc`; `idst` the row of each) is the same edges sorted by (t, r, h);
    `inbound` passes it when the caller has it (an induced subgraph filters its parent's),
    `ptrs` the two row pointers (optr, iptr) likewise.

    Its path search, reduction and distances are the array backend's
    (pog/arrays/backend.py, through pog/backend.py's dispatch)."""

    backend: ClassVar[str] = "kgreason.pog.arrays.backend"

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
        *,
        inbound: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        ptrs: tuple[np.ndarray, np.ndarray] | None = None,
    ):
        n = len(names)
        self.names, self.index = names, index
        self.rel_names = list(rel_names)
        self.h, self.r, self.t = h, r, t
        self.orel, self.odst = r, t
        self.optr = row_ptr(h, n) if ptrs is None else ptrs[0]
        if inbound is None:
            w = (bits(n), bits(len(self.rel_names)), bits(n))
            # (h, r, t) order: the codes (t, r, h) already come in order of their h bits
            codes = sort_codes(pack((t, r, h), w), 1 << sum(w), sorted_bits=w[2])
            dst_, rel_, src_ = unpack(codes, w)
            inbound = (dst_, rel_, src_)
        self.idst, self.irel, self.isrc = inbound
        self.iptr = row_ptr(self.idst, n) if ptrs is None else ptrs[1]
        self.degree = self.optr[1:] - self.optr[:-1]  # (one array, summed in place)
        self.degree += self.iptr[1:]
        self.degree -= self.iptr[:-1]
        self.present = present if present is not None else np.ones(n, dtype=bool)
        self.extra = frozenset(x for x in extra if x not in index)
        self.variant = "pog"
        self._adj_cache: dict[int, dict[Key, tuple[str, ...]]] = {}  # (read through `adj`)
        self._rel_rank: np.ndarray | None = None
        self._rel_index: dict[str, int] | None = None
        self._rank_rel: np.ndarray | None = None
        self._keys: dict[int, Key] = {}
        #: (depth, {topic's local id: undirected hop distances to it, -1 beyond depth}):
        #: set by the two-topic reduction on its graph (pog/reduction.py), read by the
        #: segment search (search._distances_to)
        self.topic_distances: tuple[int, dict[int, np.ndarray]] | None = None

    @property  # type: ignore[override]
    def adj(self) -> LazyAdj:  # a dataclass field on the base class
        """A lazy Mapping in place of the dict: a new view per read over one cache, so the
        graph does not reference an object that references it back. With that cycle a
        question's graph (~10-20 MB at 10M) was freed only by the cyclic collector, which
        runs by object counts, not bytes: RSS grew by hundreds of MB between collections."""
        return LazyAdj(self, self._adj_cache)

    @adj.setter
    def adj(self, value: object) -> None:
        raise AttributeError("ArrayClusteredGraph.adj is derived from its arrays")

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
        *,
        keep_self_loops: bool = False,
    ) -> ArrayClusteredGraph:
        """h, t index `node_names` (object array of str); ids are relabelled in name order,
        self-loops dropped (unless `keep_self_loops`), duplicates merged."""
        order = np.argsort(node_names, kind="stable")
        relabel = np.empty(len(order), dtype=np.int64)
        relabel[order] = np.arange(len(order))
        names = node_names[order]
        nn = NodeNames.given(names)
        return cls.build(
            relabel[np.asarray(h, dtype=np.int64)],
            np.asarray(r, dtype=np.int64),
            relabel[np.asarray(t, dtype=np.int64)],
            nn,
            rel_names,
            NodeIndex(nn, dict_lookup(names)),
            isolated,
            keep_self_loops=keep_self_loops,
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
        *,
        keep_self_loops: bool = False,
    ) -> ArrayClusteredGraph:
        if not keep_self_loops:
            keep = h != t
            h, r, t = h[keep], r[keep], t[keep]
        w = edge_widths(len(names), len(rel_names))
        codes = unique_codes(pack((h, r, t), w), 1 << sum(w))
        # (none left to drop when unwanted)
        return cls.from_codes(codes, names, rel_names, index, isolated, keep_self_loops=True)

    @classmethod
    def from_codes(
        cls,
        codes: np.ndarray,
        names: NodeNames,
        rel_names: Sequence[str],
        index: NodeIndex,
        isolated: Iterable[str] = (),
        *,
        keep_self_loops: bool = False,
    ) -> ArrayClusteredGraph:
        """`build` from the distinct edge codes, sorted: (h, r, t) packed with
        `edge_widths(len(names), len(rel_names))`; self-loops are dropped here unless
        `keep_self_loops`."""
        h, r, t = unpack(codes, edge_widths(len(names), len(rel_names)))
        if not keep_self_loops:
            loop = h == t
            if loop.any():
                h, r, t = h[~loop], r[~loop], t[~loop]
        return cls(h, r, t, names, rel_names, index)._with_isolated(index, isolated)

    @classmethod
    def from_csr(
        cls,
        csr: Sequence[np.ndarray],
        names: NodeNames,
        rel_names: Sequence[str],
        index: NodeIndex,
        isolated: Iterable[str] = (),
    ) -> ArrayClusteredGraph:
        """`from_codes` from the arrays kernels.cluster.cluster_compiled made: (h, r, t, optr,
        idst, irel, isrc, iptr), the same arrays the constructor derives from the codes
        (self-loops dropped: that loop never keeps them)."""
        h, r, t, optr, idst, irel, isrc, iptr = csr
        g = cls(h, r, t, names, rel_names, index, inbound=(idst, irel, isrc), ptrs=(optr, iptr))
        return g._with_isolated(index, isolated)

    def _with_isolated(self, index: NodeIndex, isolated: Iterable[str]) -> ArrayClusteredGraph:
        """`present` and `extra` of a graph built from a subgraph with these topics."""
        g = self
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

    @property
    def rel_index(self) -> dict[str, int]:
        """Each relation name's id (rel_names' position), built once per graph."""
        if self._rel_index is None:
            self._rel_index = {name: i for i, name in enumerate(self.rel_names)}
        return self._rel_index

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
        codes = unique_codes(np.concatenate(parts), 2 * max(len(self.rel_names), 1) * self.n)
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

    # --- whole-graph operations, vectorised (the rest: graph_whole.py) ----------------
    def restrict_mask(self, keep: np.ndarray) -> ArrayClusteredGraph:
        """Induced subgraph on the local ids where `keep` is True (same local ids); both
        CSRs are filtered, which keeps their order (no sort)."""
        from kgreason.pog.arrays.kernels.reduce import restrict_compiled

        keep = keep & self.present
        both = [(self.h, self.r, self.t), (self.idst, self.irel, self.isrc)]
        got = restrict_compiled(keep, both, self.n)  # large graphs: one pass per CSR
        if got is not None:
            (h, r, t, optr), (idst, irel, isrc, iptr) = got
            return ArrayClusteredGraph(
                h, r, t, self.names, self.rel_names, self.index, keep,
                inbound=(idst, irel, isrc), ptrs=(optr, iptr),
            )  # fmt: skip
        e = keep[self.h] & keep[self.t]
        i = keep[self.idst] & keep[self.isrc]
        return ArrayClusteredGraph(
            self.h[e],
            self.r[e],
            self.t[e],
            self.names,
            self.rel_names,
            self.index,
            keep,
            inbound=(self.idst[i], self.irel[i], self.isrc[i]),
        )

    def restrict(self, keep: Iterable[str]) -> ArrayClusteredGraph:
        keep = list(keep)
        mask = np.zeros(self.n, dtype=bool)
        ids = self.index.many(keep)
        mask[ids[ids >= 0]] = True
        g = self.restrict_mask(mask)
        g.extra = frozenset(k for k in keep if k in self.extra)
        return g
