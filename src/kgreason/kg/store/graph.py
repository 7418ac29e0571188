"""The CSR adjacency of a store and the fast, synchronous graph operations on node ids.

Forward arrays hold each node's out-edges (`fwd.rel`, `fwd.dst`, rows by `fwd.indptr`),
reverse arrays its in-edges (`rev.rel`, `rev.src`, plus `rev.eid`: the forward position of
the same edge). The forward position of an edge is its edge id. Rows keep file order, so
neighbour lists come out exactly as MemoryKG lists them. Noise relations stay in the
arrays and are masked at query time.

These methods are the store's "fast path" for PoG-style path search: they take and return
numpy int arrays (node ids from `NameIndex.lookup`) and never build Python objects per edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.kg.store.format import load_array

#: Edges gathered per step of a frontier expansion, at least (bounds peak memory on hubs).
CHUNK_EDGES = 1 << 13
#: Edge slots scanned, at most, to say what a cut left out (Expansion.left_out_*).
LEFT_OUT_SCAN = 1 << 16
#: Rows one hop of expand_grouped reads, at most: max(READ_MIN, READ_FACTOR * max_triples).
#: An edge shows up in at most two rows of a hop, so a hop with more than 4 * max_triples
#: rows holds more than 2 * max_triples - count new edges and can never fit the budget:
#: reading only that many never changes an uncut result (noise rows aside, which count).
READ_MIN = 1 << 16
READ_FACTOR = 4


@dataclass
class Edges:
    """A batch of edges seen from some nodes: per node, out-edges then in-edges, file order.
    `owner` indexes the queried node array; `out` is True where the neighbour is the tail."""

    owner: np.ndarray
    nbr: np.ndarray
    rel: np.ndarray
    out: np.ndarray
    eid: np.ndarray


@dataclass
class Expansion:
    eids: np.ndarray  # edge ids in discovery order
    truncated: bool
    reason: str = ""
    #: when truncated: the hop (1-based) that was cut and how many edge slots of that hop's
    #: frontier were not read (an upper bound on the triples the cut left out at that hop;
    #: farther hops were not explored at all)
    cut_hop: int = 0
    unread_edges: int = 0
    #: what the unread edges of the cut hop hold: distinct relations and distinct entities
    #: not reached otherwise (counted over at most LEFT_OUT_SCAN edge slots; `left_out_exact`
    #: False when there were more)
    left_out_relations: int = 0
    left_out_entities: int = 0
    left_out_exact: bool = True
    #: expand_grouped only: the (relation, direction) groups a hop truncated, largest first
    groups: list[GroupCut] = field(default_factory=list)
    #: expand_grouped only: rows of cut hops not read at all (hub rows past the read budget)
    unread_rows: int = 0


@dataclass
class GroupCut:
    """One (relation, direction) group of a hop that the relation-aware bound truncated:
    `kept` of its `total` new edges were taken. `out` is True for edges leaving the frontier."""

    hop: int
    rel: int
    out: bool
    kept: int
    total: int
    #: the (relation, out) steps from the topic before this one, when grouped by path
    via: tuple[tuple[int, bool], ...] = ()


def share_budget(sizes: np.ndarray, budget: int) -> np.ndarray:
    """Max-min fair shares (water-filling): every group gets min(size, c) for the largest c
    the budget allows, so the biggest groups are the ones truncated; the few slots left
    over go one each to the smallest of the truncated groups. With fewer slots than
    groups, the smallest groups get one edge each."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if int(sizes.sum()) <= budget:
        return sizes.copy()
    order = np.argsort(sizes, kind="stable")
    s = sizes[order]
    n = len(s)
    prefix = np.concatenate([[0], np.cumsum(s)[:-1]])
    at = prefix + s * (n - np.arange(n))  # total taken if c = s[k]; non-decreasing in k
    k = int(np.searchsorted(at, budget, side="right")) - 1
    c = budget // n if k < 0 else int(s[k]) + (budget - int(at[k])) // (n - k - 1)
    take = np.minimum(sizes, c)
    extra = budget - int(take.sum())
    if extra > 0:
        big = order[sizes[order] > c][:extra]
        take[big] += 1
    return take


def _first_index(values: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each value, in order (see _first_occurrences)."""
    order = np.arange(len(values), dtype=np.int32)
    if len(values) < 2:
        return order
    scratch[values] = len(values)
    np.minimum.at(scratch, values, order)
    return np.flatnonzero(scratch[values] == order)


def _first_occurrences(values: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """values without repeats, in order of first occurrence, in O(n) (np.unique sorts).
    `scratch` is any int32 array indexable by the values; its content is irrelevant."""
    if len(values) < 2:
        return values
    order = np.arange(len(values), dtype=np.int32)
    scratch[values] = len(values)
    np.minimum.at(scratch, values, order)
    return values[scratch[values] == order]


def _round_robin(owner: np.ndarray, group: np.ndarray, take: np.ndarray) -> np.ndarray:
    """Mask of the rows kept when group g keeps take[g] rows: inside a truncated group the
    k-th row of every owner comes before any owner's (k+1)-th, then row order. Rows are
    owner-major (as gathered), so a stable sort keeps row order inside each run."""
    keep = np.ones(len(owner), dtype=bool)
    sizes = np.bincount(group, minlength=len(take))
    rows = np.flatnonzero((take < sizes)[group])
    if len(rows) == 0:
        return keep
    g, own = group[rows], owner[rows]
    k1 = own * len(take) + g
    o = np.argsort(k1, kind="stable")
    k1 = k1[o]
    starts = np.flatnonzero(np.r_[True, k1[1:] != k1[:-1]])
    rank = np.empty(len(rows), dtype=np.int64)
    rank[o] = np.arange(len(rows)) - np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
    o2 = np.argsort(g * (int(rank.max()) + 1) + rank, kind="stable")
    gs = g[o2]
    gstart = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
    at = np.arange(len(o2)) - np.repeat(gstart, np.diff(np.r_[gstart, len(o2)]))
    keep[rows] = False
    keep[rows[o2[at < take[gs]]]] = True
    return keep


def _via(paths: list[tuple[np.ndarray, np.ndarray]], parent: int) -> tuple[tuple[int, bool], ...]:
    """The (relation, out) steps of a path group's ancestors, topic first."""
    steps: list[tuple[int, bool]] = []
    for parents, keys in reversed(paths):
        if not len(keys):
            break
        k = int(keys[parent])
        steps.append((k // 2, bool(k % 2)))
        parent = int(parents[parent])
    return tuple(reversed(steps))


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

    def _chunks(self, frontier: np.ndarray, budget: int) -> list[np.ndarray]:
        dout, din = self.degree(frontier)
        cum = np.cumsum(dout + din)
        if len(cum) == 0 or cum[-1] <= budget:
            return [frontier]
        cuts = np.searchsorted(cum, np.arange(budget, int(cum[-1]), budget), side="left") + 1
        return [c for c in np.split(frontier, np.unique(cuts)) if len(c)]

    def _walk_start(
        self, seeds: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A breadth-first walk's start: the seeds deduplicated in order (the first
        frontier), the visited-node and seen-edge masks, and scratch for order-preserving
        dedupe (np.empty only maps the pages that get touched)."""
        seeds = np.asarray(seeds, dtype=np.int64)
        _, first = np.unique(seeds, return_index=True)
        frontier = seeds[np.sort(first)]
        visited = np.zeros(self.n_nodes, dtype=bool)
        visited[frontier] = True
        seen = np.zeros(self.n_edges, dtype=bool)
        edge_scratch = np.empty(self.n_edges, dtype=np.int32)
        node_scratch = np.empty(self.n_nodes, dtype=np.int32)
        return frontier, visited, seen, edge_scratch, node_scratch

    def expand(self, seeds: np.ndarray, depth: int, max_triples: int) -> Expansion:
        """Breadth-first expansion, both directions, from the seeds (node ids, in order).
        New edges are taken in discovery order and the walk stops as soon as one more new
        edge would exceed max_triples (exactly MemoryKG.expand's rule)."""
        frontier, visited, seen, edge_scratch, node_scratch = self._walk_start(seeds)
        found: list[np.ndarray] = []
        count = 0
        for level in range(depth):
            nxt: list[np.ndarray] = []
            dout, din = self.degree(frontier)
            level_edges, read = int(dout.sum() + din.sum()), 0
            chunks = self._chunks(frontier, max(CHUNK_EDGES, 2 * (max_triples - count)))
            for ci, chunk in enumerate(chunks):
                pos, owner = self.positions(chunk)
                a = 0
                while a < len(pos):  # slices, so a hub's edges are read only as far as needed
                    b = a + max(CHUNK_EDGES, 2 * (max_triples - count))
                    ed = self.gather(pos[a:b], owner[a:b])
                    read += len(pos[a:b])
                    rest, a = pos[b:], b
                    new = _first_occurrences(ed.eid[~seen[ed.eid]], edge_scratch)
                    if count + len(new) > max_triples:
                        # the slice's rows from the first edge not taken on were not used
                        i = int(np.flatnonzero(ed.eid == new[max_triples - count])[0])
                        j = i + LEFT_OUT_SCAN  # the scan's budget (rest is then not read)
                        tail = Edges(
                            ed.owner[i:j], ed.nbr[i:j], ed.rel[i:j], ed.out[i:j], ed.eid[i:j]
                        )
                        rest = rest if j >= len(ed.eid) else rest[:0]
                        found.append(new[: max_triples - count])
                        seen[found[-1]] = True
                        visited[ed.nbr[:i]] = True  # reached by the rows read before the cut
                        return Expansion(
                            np.concatenate(found),
                            True,
                            f"max_triples={max_triples} reached",
                            level + 1,
                            level_edges - read + len(new) - (max_triples - count),
                            *self._left_out(tail, rest, chunks[ci + 1 :], seen, visited),
                        )
                    seen[new] = True
                    count += len(new)
                    found.append(new)
                    nv = _first_occurrences(ed.nbr[~visited[ed.nbr]], node_scratch)
                    visited[nv] = True
                    nxt.append(nv)
            frontier = np.concatenate(nxt) if nxt else np.zeros(0, dtype=np.int64)
            if len(frontier) == 0:
                break
        return Expansion(np.concatenate(found) if found else np.zeros(0, dtype=np.int64), False)

    def _capped_positions(self, nodes: np.ndarray, budget: int) -> tuple[np.ndarray, np.ndarray]:
        """positions() with at most `budget` rows in all: the (node, direction) segments
        share it by water-filling, so a hub's rows are cut before anyone else's."""
        dout, din = self.degree(nodes)
        lens = share_budget(np.stack([dout, din], axis=1).ravel(), budget)
        starts = np.stack([self.fwd_ptr[nodes], self.rev_ptr[nodes] + self.n_edges], axis=1)
        per_node = lens.reshape(-1, 2).sum(axis=1)
        pos = ranges(starts.ravel(), lens)
        return pos, np.repeat(np.arange(len(nodes), dtype=np.int64), per_node)

    def expand_grouped(
        self, seeds: np.ndarray, depth: int, max_triples: int, *, by_path: bool = True
    ) -> Expansion:
        """Breadth-first expansion like `expand`, with a relation-aware bound. A hop whose
        new edges fit the remaining budget is taken whole, so without a cut the edges are
        exactly `expand`'s. A hop that does not fit gets the remaining budget split evenly
        over the hops left (all of it at the last hop), shared by `share_budget` across its
        groups: every group keeps edges and the largest (hub) groups are truncated first.
        A group is a relation path from a topic, (topic, r1/dir, ..., rk/dir): PoG's
        clustered supernodes, so the answer's chain competes only with itself
        (`by_path=False`: the hop's (relation, direction) alone). A node belongs to the path
        of the edge that first reached it. Inside a group the k-th edges of every frontier
        node come before any node's (k+1)-th, so one hub cannot fill its group alone. Each
        hop reads at most max(READ_MIN, READ_FACTOR * max_triples) rows; a level with more
        rows can never fit the budget, and its hubs' rows are the ones left unread."""
        frontier, visited, seen, edge_scratch, node_scratch = self._walk_start(seeds)
        read_cap = max(READ_MIN, READ_FACTOR * max_triples)
        n_keys = 2 * max(len(self.noise), int(self.fwd_rel.max(initial=0)) + 1)
        # path group of each frontier node, and per level the groups' (parent, rel*2+out)
        fgroup = np.arange(len(frontier), dtype=np.int64) if by_path else None
        paths: list[tuple[np.ndarray, np.ndarray]] = []
        found: list[np.ndarray] = []
        res = Expansion(np.zeros(0, dtype=np.int64), False)
        count = 0
        for level in range(depth):
            if len(frontier) == 0:
                break
            dout, din = self.degree(frontier)
            rows = int(dout.sum() + din.sum())
            pos, owner = self._capped_positions(frontier, read_cap)
            ed = self.gather(pos, owner)
            first_row = np.zeros(len(ed.eid), dtype=bool)
            fresh = np.flatnonzero(~seen[ed.eid])
            first_row[fresh[_first_index(ed.eid[fresh], edge_scratch)]] = True
            sel = np.flatnonzero(first_row)
            key = ed.rel[sel] * 2 + ed.out[sel]
            if fgroup is not None:
                key = fgroup[ed.owner[sel]] * n_keys + key
            gkeys, ginv, sizes = np.unique(key, return_inverse=True, return_counts=True)
            remaining = max_triples - count
            if len(sel) > remaining or rows > len(pos):
                allot = remaining if level == depth - 1 else remaining // (depth - level)
                take = share_budget(sizes, allot)
                keep = _round_robin(ed.owner[sel], ginv, take)
                for i in np.flatnonzero(take < sizes).tolist():
                    k = int(gkeys[i])
                    via = _via(paths, k // n_keys) if fgroup is not None else ()
                    step = k % n_keys
                    kept, total = int(take[i]), int(sizes[i])
                    res.groups.append(
                        GroupCut(level + 1, step // 2, bool(step % 2), kept, total, via)
                    )
                res.truncated = True
                res.unread_rows += rows - len(pos)
                res.unread_edges += len(sel) - int(keep.sum()) + rows - len(pos)
                if not res.cut_hop:
                    res.cut_hop = level + 1
                sel, ginv = sel[keep], ginv[keep]
            new = ed.eid[sel]
            seen[new] = True
            count += len(new)
            found.append(new)
            nb = ed.nbr[sel]
            fresh = np.flatnonzero(~visited[nb])
            fi = fresh[_first_index(nb[fresh], node_scratch)]
            frontier = nb[fi]
            visited[frontier] = True
            if fgroup is not None:
                paths.append((gkeys // n_keys, gkeys % n_keys))
                fgroup = ginv[fi]
        res.eids = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
        if res.truncated:
            res.reason = f"max_triples={max_triples} reached (relation-aware)"
            res.groups.sort(key=lambda g: (g.hop, -(g.total - g.kept)))
            res.left_out_relations = len({g.rel for g in res.groups if g.kept == 0})
            res.left_out_exact = res.unread_rows == 0
        return res

    def _left_out(
        self,
        tail: Edges,
        rest: np.ndarray,
        chunks: list[np.ndarray],
        seen: np.ndarray,
        visited: np.ndarray,
    ) -> tuple[int, int, bool]:
        """(relations, entities, exact) held by the edges a cut did not take: the rows of
        the cut slice from the first edge not taken (`tail`), the chunk's unread positions
        `rest`, then the level's remaining chunks of nodes."""
        rels: list[np.ndarray] = []
        nbrs: list[np.ndarray] = []
        if len(tail.eid) >= LEFT_OUT_SCAN:  # the cut slice alone fills the budget
            rest, chunks = rest[:0], []
            exact = False
        else:
            exact = True
        head = rest[: max(0, LEFT_OUT_SCAN - len(tail.eid))]
        eds = [tail, self.gather(head, np.zeros(len(head), dtype=np.int64))]
        scanned = len(tail.eid) + len(head)
        exact = exact and len(head) == len(rest)
        for k, chunk in enumerate(chunks):
            if scanned >= LEFT_OUT_SCAN:
                exact = exact and k == len(chunks)
                break
            take = LEFT_OUT_SCAN - scanned
            dout, din = self.degree(chunk)
            whole = len(chunk)
            chunk = chunk[: int(np.searchsorted(np.cumsum(dout + din), take)) + 1]
            exact = exact and len(chunk) >= whole
            pos, owner = self.positions(chunk)
            eds.append(self.gather(pos[:take], owner[:take]))
            exact = exact and len(pos) <= take
            scanned += min(len(pos), take)
        for ed in eds:
            cut = ~seen[ed.eid]
            rels.append(ed.rel[cut])
            nbrs.append(ed.nbr[cut & ~visited[ed.nbr]])
        n_rel = len(np.unique(np.concatenate(rels))) if rels else 0
        n_ent = len(np.unique(np.concatenate(nbrs))) if nbrs else 0
        return n_rel, n_ent, exact

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
