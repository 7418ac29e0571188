"""The CSR adjacency of a store and the fast, synchronous graph operations on node ids.

Forward arrays hold each node's out-edges (`fwd.rel`, `fwd.dst`, rows by `fwd.indptr`),
reverse arrays its in-edges (`rev.rel`, `rev.src`, plus `rev.eid`: the forward position of
the same edge). The forward position of an edge is its edge id. Rows keep file order, so
neighbour lists come out exactly as MemoryKG lists them. Noise relations stay in the
arrays and are masked at query time.

These methods are the store's "fast path" for PoG-style path search: they take and return
numpy int arrays (node ids from `NameIndex.lookup`) and never build Python objects per edge.
The walk's types and pooled scratch live in walk.py, the relation-aware bound in bound.py;
their public names are importable from here too.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import numpy as np

from kgreason.kg.store.bound import (
    READ_FACTOR,
    READ_MIN,
    GroupCut,
    GroupTable,
    capped_positions,
    expand_grouped,
    share_budget,
)
from kgreason.kg.store.build_index import ranges
from kgreason.kg.store.format import load_array
from kgreason.kg.store.walk import (
    DROP,
    PAIR,
    Edges,
    Expansion,
    Found,
    ScratchPool,
    WalkScratch,
    chunk_bounds,
    first_occurrences,
    left_out,
    slice_owner,
    sort_edge_ids,
)

__all__ = [
    "CHUNK_EDGES",
    "LEFT_OUT_SCAN",
    "READ_FACTOR",
    "READ_MIN",
    "CSRGraph",
    "Edges",
    "Expansion",
    "GroupCut",
    "GroupTable",
    "expand_grouped",
    "share_budget",
    "sort_edge_ids",
]

#: Edges gathered per step of a frontier expansion, at least (bounds peak memory on hubs).
CHUNK_EDGES = 1 << 13
#: Edge slots scanned, at most, to say what a cut left out (Expansion.left_out_*).
LEFT_OUT_SCAN = 1 << 16
#: Rows of a slice expand dedupes at once, at least (it reads a slice in parts of about
#: the edges still wanted, so the rows past a cut are only counted).
PART_MIN = 1 << 12


class CSRGraph:
    def __init__(self, directory: Path, noise: np.ndarray):
        self.fwd_ptr = load_array(directory, "fwd.indptr")
        self.fwd_rel = load_array(directory, "fwd.rel")
        self.fwd_dst = load_array(directory, "fwd.dst")
        self.rev_ptr = load_array(directory, "rev.indptr")
        self.rev_rel = load_array(directory, "rev.rel")
        self.rev_src = load_array(directory, "rev.src")
        self.rev_eid = load_array(directory, "rev.eid")
        self.n_nodes = len(self.fwd_ptr) - 1
        self.n_edges = len(self.fwd_rel)
        #: noise[r] is True for relations filtered at query time
        self.noise = np.asarray(noise, dtype=bool)
        self._any_noise = bool(self.noise.any())
        #: masks and scratch of finished walks, reused (walk.py says why)
        self.scratch = ScratchPool(self.n_nodes, self.n_edges)
        #: tables derived from this store once, for its readers (pog/arrays/build's suffix table)
        self.memo: dict[str, object] = {}

    @cached_property
    def max_rel(self) -> int:
        """The largest relation id used (a full scan of fwd.rel, so once, on first use)."""
        return int(self.fwd_rel.max(initial=0))

    def degree(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(out, in) degrees, noise included (cheap; used to size work)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        return (
            self.fwd_ptr[nodes + 1] - self.fwd_ptr[nodes],
            self.rev_ptr[nodes + 1] - self.rev_ptr[nodes],
        )

    def positions(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(pos, owner): where each node's edges sit, out-edges then in-edges, in one index
        space (pos < n_edges: forward arrays; else reverse arrays at pos - n_edges)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        dout, din = self.degree(nodes)
        starts = np.stack([self.fwd_ptr[nodes], self.rev_ptr[nodes] + self.n_edges], axis=1)
        pos = ranges(starts.ravel(), np.stack([dout, din], axis=1).ravel())
        return pos, np.repeat(np.arange(len(nodes), dtype=np.int64), dout + din)

    def gather(self, pos: np.ndarray, owner: np.ndarray, limit: int | None = None) -> Edges:
        """The edges at `positions`, noise removed, at most `limit` per owner."""
        out = pos < self.n_edges
        po, pi = pos[out], pos[~out] - self.n_edges
        nbr = np.empty(len(pos), dtype=np.int64)
        rel = np.empty(len(pos), dtype=np.int64)
        eid = np.empty(len(pos), dtype=np.int64)
        nbr[out], rel[out], eid[out] = self.fwd_dst[po], self.fwd_rel[po], po
        nbr[~out], rel[~out], eid[~out] = self.rev_src[pi], self.rev_rel[pi], self.rev_eid[pi]
        keep = None
        if self._any_noise:
            keep = ~self.noise[rel]
        if limit is not None:
            own = owner if keep is None else owner[keep]
            cnt = np.bincount(own, minlength=int(owner.max()) + 1 if len(owner) else 0)
            rank = np.arange(len(own)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            lim = rank < limit
            if keep is None:
                keep = lim
            else:
                keep[np.flatnonzero(keep)[~lim]] = False
        if keep is not None:
            owner, nbr, rel, out, eid = owner[keep], nbr[keep], rel[keep], out[keep], eid[keep]
        return Edges(owner, nbr, rel, out, eid)

    def edges(self, nodes: np.ndarray, limit: int | None = None) -> Edges:
        """All (noise-filtered) edges of each node; at most `limit` per node if given."""
        return self.gather(*self.positions(nodes), limit=limit)

    def triples(self, eids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(head, rel, tail) node/relation ids of edge ids."""
        eids = np.asarray(eids, dtype=np.int64)
        head = np.searchsorted(self.fwd_ptr, eids, side="right") - 1
        return head, np.asarray(self.fwd_rel[eids]), np.asarray(self.fwd_dst[eids])

    def has_edge(self, head: int, rel: int, tail: int) -> bool:
        a, b = int(self.fwd_ptr[head]), int(self.fwd_ptr[head + 1])
        return bool(((self.fwd_rel[a:b] == rel) & (self.fwd_dst[a:b] == tail)).any())

    def walk_start(self, seeds: np.ndarray, sc: WalkScratch) -> np.ndarray:
        """A breadth-first walk's first frontier: the seeds deduplicated in order, visited."""
        seeds = np.asarray(seeds, dtype=np.int64)
        _, first = np.unique(seeds, return_index=True)
        frontier = seeds[np.sort(first)]
        sc.visit(frontier)
        return frontier

    def expand(self, seeds: np.ndarray, depth: int, max_triples: int) -> Expansion:
        """Breadth-first expansion, both directions, from the seeds (node ids, in order).
        New edges are taken in discovery order and the walk stops as soon as one more new
        edge would exceed max_triples (exactly MemoryKG.expand's rule)."""
        with self.scratch.take() as sc:
            return self._expand(sc, seeds, depth, max_triples)

    def _expand(
        self, sc: WalkScratch, seeds: np.ndarray, depth: int, max_triples: int
    ) -> Expansion:
        # Rows are read by slices as `gather` would (same slice bounds: they shape the cut
        # report), but only edge ids are computed for a whole slice; neighbours only for
        # the rows of new edges (any other row's neighbour is visited already: it is the
        # owner of an earlier row of the same edge, or was reached with it).
        frontier = self.walk_start(seeds, sc)
        found = Found(max(0, min(max_triples, self.n_edges)), self.fwd_rel.dtype)
        from kgreason.kg.store.kernels.walk import expansion, walk_compiled  # (numba: large only)

        got = walk_compiled(self, sc, frontier, depth, max_triples, CHUNK_EDGES, found)
        if got is not None:  # the same walk as one compiled loop (kernels/walk.py)
            return expansion(self, got, found, sc, max_triples, LEFT_OUT_SCAN, frontier)
        count = 0
        for level in range(depth):
            nxt: list[np.ndarray] = []
            fs, rs = self.fwd_ptr[frontier], self.rev_ptr[frontier]
            dout, din = self.fwd_ptr[frontier + 1] - fs, self.rev_ptr[frontier + 1] - rs
            starts = np.stack([fs, rs + self.n_edges], axis=1)
            lens = np.stack([dout, din], axis=1)
            cum = np.cumsum(dout + din)
            level_edges, read = int(cum[-1]) if len(cum) else 0, 0
            bounds = chunk_bounds(cum, max(CHUNK_EDGES, 2 * (max_triples - count)))
            for ci, (c0, c1) in enumerate(bounds):
                seg = lens[c0:c1].ravel()
                buf = sc.buffer("pos", int(seg.sum()), np.int64)  # this chunk's only
                pos = ranges(starts[c0:c1].ravel(), seg, buf)
                seg_end, seg_node = np.cumsum(seg), np.repeat(frontier[c0:c1], 2)
                a = 0
                while a < len(pos):  # slices, so a hub's edges are read only as far as needed
                    b = a + max(CHUNK_EDGES, 2 * (max_triples - count))
                    p, own = pos[a:b], slice_owner(seg_end, seg_node, a, min(b, len(pos)))
                    read += len(p)
                    rest, a = pos[b:], b
                    if self._any_noise:
                        quiet = ~self.noise[self._rels(p)]
                        p, own = p[quiet], own[quiet]
                    # the slice in parts of about the edges still wanted: once a part
                    # holds the cut, the rest of the slice is only counted
                    start = 0
                    while start < len(p):
                        need = max_triples - count
                        m = start + max(PART_MIN, need + (need >> 3) + 1)
                        part = p[start:m]
                        eid, rows = self._new_rows(part, frontier[c0:c1], sc)
                        new = eid[rows]
                        if len(new) > need:
                            more = 0
                            if m < len(p):  # (marks new[:need] seen, as sc.see would)
                                more = self._count_new(p[m:], new, need, sc)
                            else:
                                sc.see(new[:need])
                            # the slice's rows from the first edge not taken on were not used
                            i = start + int(rows[need])
                            j = i + LEFT_OUT_SCAN  # the scan's budget (rest is then not read)
                            tp = p[i:j]
                            tail = (self._eids(tp), self._rels(tp), self._nbrs(tp))
                            rest = rest if j >= len(p) else rest[:0]
                            took = rows[:need]
                            nb = self._keep(found, new[:need], part[took], own[start:m][took], sc)
                            sc.visit(nb)  # reached by the rows read before the cut
                            chunks = [frontier[x:y] for x, y in bounds[ci + 1 :]]
                            return Expansion(
                                found.eids[: found.count],
                                True,
                                f"max_triples={max_triples} reached",
                                level + 1,
                                level_edges - read + len(new) + more - need,
                                *self._left_out(tail, rest, chunks, sc),
                                rows=found.rows(),
                            )
                        sc.see(new)
                        count += len(new)
                        nb = self._keep(found, new, part[rows], own[start:m][rows], sc)
                        nv = first_occurrences(nb[sc.unvisited(nb)], sc.node_scratch)
                        sc.visit(nv)
                        nxt.append(nv)
                        start = m
            frontier = np.concatenate(nxt) if nxt else np.zeros(0, dtype=np.int64)
            if len(frontier) == 0:
                break
        return Expansion(found.eids[: found.count], False, rows=found.rows())

    def _new_rows(
        self, p: np.ndarray, owners: np.ndarray, sc: WalkScratch
    ) -> tuple[np.ndarray, np.ndarray]:
        """(eid, rows): the edge id at each position of a slice (rows of the nodes
        `owners`, owner-major, out-rows then in-rows) and the rows holding the first
        occurrence of each edge not seen yet. An edge shows up twice in a slice only as an
        out-row of its head and an in-row of its tail, both owners here; its out-row's
        position is its id. So the unseen out-rows' ids are marked PAIR in `seen` for a
        moment: an in-row reading PAIR is such a pair, and the owners' order says which of
        the two rows comes first (O(n) with a byte mask, no per-edge scratch)."""
        n, seen, stamp = self.n_edges, sc.seen, sc.stamp
        # masks over the slice, not index arrays per direction: fewer and smaller
        # temporaries
        eid, inn = self._slice_eids(p, sc)
        fo = (seen[eid] != stamp) & ~inn  # unseen out-rows (their eid is their position)
        efo = eid[fo]
        seen[efo] = PAIR
        si = seen[eid]
        keep = inn & (si != stamp) & (si != PAIR)
        keep |= fo
        dup = np.flatnonzero(inn & (si == PAIR))
        if len(dup):
            # which row of each pair comes first: the one whose owner comes first; a
            # self-loop's out-row (a node's out-rows come before its in-rows)
            sc.node_scratch[owners] = np.arange(len(owners), dtype=np.int32)
            qd = p[dup] - n
            tail_owner = sc.node_scratch[np.searchsorted(self.rev_ptr, qd, side="right") - 1]
            head_owner = sc.node_scratch[self.rev_src[qd]]
            in_first = tail_owner < head_owner
            keep[dup[in_first]] = True
            drop = eid[dup[in_first]]  # their out-rows come later: unmark them
            if len(drop):
                seen[drop] = DROP
                keep[np.flatnonzero(fo)[seen[efo] == DROP]] = False
        seen[efo] = 0
        return eid, np.flatnonzero(keep)

    def _slice_eids(self, p: np.ndarray, sc: WalkScratch) -> tuple[np.ndarray, np.ndarray]:
        """(edge id, is an in-row) of each position of a slice, in the scratch's buffers
        (valid until the next call). Edge ids are int64: they index `seen`, where int32
        would cost a cast; the gather clips (an out-row reads rev_eid[0], then keeps its
        own position)."""
        n = self.n_edges
        inn = p >= n
        eid = sc.buffer("eid", len(p), np.int64)
        eid[:] = p
        q = np.subtract(p, n, out=sc.buffer("q", len(p), np.int64))
        tmp = sc.buffer("i", len(p), self.rev_eid.dtype)
        np.copyto(eid, np.take(self.rev_eid, q, mode="clip", out=tmp), where=inn)
        return eid, inn

    def _count_new(self, p: np.ndarray, new: np.ndarray, taken: int, sc: WalkScratch) -> int:
        """How many edges not seen yet the positions `p` hold that `new` (the new edges of
        the part before, `taken` of them kept) does not: counted, not listed."""
        seen, stamp = sc.seen, sc.stamp
        seen[new] = stamp  # for the count (the first `taken` stay: they are kept)
        eid, inn = self._slice_eids(p, sc)
        uo = eid[(seen[eid] != stamp) & ~inn]
        seen[uo] = PAIR  # an in-row reading PAIR is the same edge as an out-row here
        si = seen[eid]
        more = len(uo) + int(np.count_nonzero(inn & (si != stamp) & (si != PAIR)))
        seen[uo] = 0
        seen[new[taken:]] = 0
        return more

    def _eids(self, pos: np.ndarray) -> np.ndarray:
        """The edge id at each position (gather's `eid`)."""
        eid = pos.copy()
        inn = pos >= self.n_edges
        eid[inn] = self.rev_eid[pos[inn] - self.n_edges]
        return eid

    def _positions(self, nodes: np.ndarray) -> np.ndarray:
        """positions() without the owners."""
        dout, din = self.degree(nodes)
        starts = np.stack([self.fwd_ptr[nodes], self.rev_ptr[nodes] + self.n_edges], axis=1)
        return ranges(starts.ravel(), np.stack([dout, din], axis=1).ravel())

    def _column(self, pos: np.ndarray, fwd: np.ndarray, rev: np.ndarray) -> np.ndarray:
        """One of gather's columns alone: `fwd` at out-positions, `rev` at in-positions."""
        inn = pos >= self.n_edges
        out = np.empty(len(pos), dtype=np.int64)
        out[~inn] = fwd[pos[~inn]]
        out[inn] = rev[pos[inn] - self.n_edges]
        return out

    def _keep(
        self, found: Found, eids: np.ndarray, pos: np.ndarray, owner: np.ndarray, sc: WalkScratch
    ) -> np.ndarray:
        """Write the edges `eids` (rows at `pos`, read by node `owner` each) into `found`
        with their rows; returns each row's neighbour. Gathers with mode="clip" and masked
        copies instead of split index arrays: few temporaries (a fresh page costs more
        than the reads here, so work arrays are the scratch's)."""
        own, nb, r, inn = found.claim(eids)
        k, n = len(pos), self.n_edges
        np.greater_equal(pos, n, out=inn)
        q = np.subtract(pos, n, out=sc.buffer("q", k, np.int64))  # < 0 on out-rows: clipped
        for fwd, rev, col in ((self.fwd_dst, self.rev_src, nb), (self.fwd_rel, self.rev_rel, r)):
            # (take's `out` must have the column's dtype: a buffer per dtype)
            col[:] = np.take(fwd, pos, mode="clip", out=sc.buffer("i", k, fwd.dtype))
            np.copyto(
                col, np.take(rev, q, mode="clip", out=sc.buffer("i", k, rev.dtype)), where=inn
            )
        own[:] = owner
        return nb

    def _nbrs(self, pos: np.ndarray) -> np.ndarray:
        """The neighbour at each position (gather's `nbr`)."""
        return self._column(pos, self.fwd_dst, self.rev_src)

    def _rels(self, pos: np.ndarray) -> np.ndarray:
        """The relation at each position (gather's `rel`)."""
        return self._column(pos, self.fwd_rel, self.rev_rel)

    def _capped_positions(self, nodes: np.ndarray, budget: int) -> tuple[np.ndarray, np.ndarray]:
        return capped_positions(self, nodes, budget)

    def expand_grouped(
        self, seeds: np.ndarray, depth: int, max_triples: int, *, by_path: bool = True
    ) -> Expansion:
        """The relation-aware bound: see kgreason.kg.store.bound.expand_grouped."""
        return expand_grouped(self, seeds, depth, max_triples, by_path=by_path)

    def _left_out(self, tail, rest, chunks, sc: WalkScratch) -> tuple[int, int, bool]:
        """What a cut left out (walk.left_out, over at most LEFT_OUT_SCAN edge slots)."""
        return left_out(self, tail, rest, chunks, sc, LEFT_OUT_SCAN)

    def distances(
        self, source: int, depth: int, max_edges: int | None = None
    ) -> tuple[np.ndarray, int]:
        """Undirected hop distance from `source` (int8; 127 = not reached) and the depth up
        to which it is exact. Stops early, before a level that would scan more than
        `max_edges` edges (hubs), so callers treat unreached nodes as farther than that."""
        dist = np.full(self.n_nodes, 127, dtype=np.int8)
        dist[source] = 0
        frontier = np.array([source], dtype=np.int64)
        for d in range(1, depth + 1):
            if len(frontier) == 0:
                return dist, depth
            if max_edges is not None:
                dout, din = self.degree(frontier)
                if int(dout.sum() + din.sum()) > max_edges:
                    return dist, d - 1
            nb = self.edges(frontier).nbr
            nb = np.unique(nb[dist[nb] == 127])
            dist[nb] = d
            frontier = nb
        return dist, depth
