"""Whole-graph reads of the array graph (pog/arrays/graph.py), vectorised: its entities
and triples, their counts, the undirected neighbour CSR and BFS distances.

Why apart: graph.py holds the graph's arrays, its constructors and the per-node view
(`adj`, `entry`, `expand_all`); these answer ClusteredGraph's whole-graph questions from
those arrays (kernels in pog/arrays/csr.py), mixed into `ArrayClusteredGraph` ahead of
ClusteredGraph so that they replace its dict walks. Induced subgraphs (`restrict_mask`,
`restrict`) stay in graph.py: they build an ArrayClusteredGraph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kgreason.kg.base import Triple
from kgreason.pog.arrays.csr import (
    Rows,
    bfs,
    bits,
    group_count,
    pack,
    row_ptr,
    unique_codes,
    unpack,
)

if TYPE_CHECKING:
    from kgreason.pog.arrays.names import NodeIndex, NodeNames


class WholeGraphOps:
    """Needs the host's arrays (`h`, `r`, `t`, the two CSRs, `degree`, `present`), `names`,
    `index`, `rel_names`, `extra` and `n`: ArrayClusteredGraph's."""

    if TYPE_CHECKING:
        names: NodeNames
        index: NodeIndex
        rel_names: list[str]
        h: np.ndarray
        r: np.ndarray
        t: np.ndarray
        optr: np.ndarray
        odst: np.ndarray
        iptr: np.ndarray
        idst: np.ndarray
        irel: np.ndarray
        isrc: np.ndarray
        degree: np.ndarray
        present: np.ndarray
        extra: frozenset[str]

        @property
        def n(self) -> int: ...

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
        """(node, relation) groups of the out-edges plus those of the in-edges: both CSRs
        are sorted by (row, relation), so a group is a run."""
        return group_count(self.h, self.r) + group_count(self.idst, self.irel)

    def undirected(self) -> Rows:
        """Distinct undirected neighbour pairs (both orientations), CSR: (ptr, nbr)."""
        n = self.n
        a = np.concatenate([self.h, self.t])
        b = np.concatenate([self.t, self.h])
        w = (bits(n), bits(n))
        src, nbr = unpack(unique_codes(pack((a, b), w), 1 << sum(w)), w)
        return row_ptr(src, n), nbr

    def undirected_cached(self) -> Rows:
        if getattr(self, "_und", None) is None:
            self._und = self.undirected()
        return self._und

    def local_distances(self, u: int, max_depth: int, und: Rows | None = None) -> np.ndarray:
        """Undirected hop distance from local id u (-1 = farther than max_depth); over the
        out- and in-edge CSRs unless `und` (undirected()) is given: same distances."""
        if und is not None:
            return bfs(self.n, u, max_depth, [und])
        rows = [(self.optr, self.odst), (self.iptr, self.isrc)]
        return bfs(self.n, u, max_depth, rows, self.degree)

    def distances(self, source: str, max_depth: int) -> dict[str, int]:
        u = self.index.get(source)
        if u is None or not self.present[u]:
            return {source: 0}
        d = self.local_distances(u, max_depth)
        hit = np.flatnonzero(d >= 0)
        return dict(zip(self.names[hit].tolist(), d[hit].tolist(), strict=True))
