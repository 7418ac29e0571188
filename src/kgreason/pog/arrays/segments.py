"""A level's distinct sets expanded by (node, key) segments instead of edge rows.

Why: the reached set of a distinct set u by key c is the union, over u's members m, of
m's neighbours by c. In the clustered graph's CSR arrays (sorted by (node, relation,
neighbour), both directions) the neighbours of one (m, c) are a contiguous, sorted, distinct
run: a *segment*. steps.py's first version read every edge row of every member and sorted
all of them (1-2.4M rows per third level of a 10M single-topic question; the sort was the
largest cost of the paths stage). Here:

1. the members' segments are gathered (one entry per (member, key): ~10x fewer than rows)
   and ordered by (u, key), giving the groups (u, key) with their segments;
2. a group of ONE segment whose members are all kept IS its reached set: it is referenced in
   place (the pool starts with the graph's two neighbour arrays), not copied, and its set
   hash is a difference of prefix sums;
3. only the other groups' rows are gathered, filtered by `keep`, and sorted; they arrive
   grouped by (u, key) with sorted runs inside, which numpy's stable sort (timsort) handles
   far faster than a sort of random codes.

The output (`Expanded`) holds the same entries, sets and hashes as the row-by-row version;
sets may overlap in the pool and lie in any order there, which every reader allows (they
slice by (a, ln)). The same segment index answers restrict's "rows of (node, key)"
queries (`key_rows`).

API:
    segment_table(g) -> Segments (cached on the graph);  segment_hashes(g, hv) -> prefix sums
    expand_segments(g, members, owner, keep, hv, bad_cum) -> Expanded (entries of the sets)
    key_rows(g, nodes, codes) -> the pool rows of each (node, key) (restrict)
    member_sorted(sorted, q) -> q in sorted, elementwise
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from kgreason.jit import run_parallel, use_jit
from kgreason.kg.store.build_index import ranges
from kgreason.pog.arrays.csr import bits, distinct_sorted
from kgreason.pog.arrays.kernels import segments

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import ArrayClusteredGraph


#: filter after deduplicating when fewer than 1 / LATE_FILTER of the rows are dropped (a
#: free search drops only its start node: masking every row first cost ~8 ms per 10^6 rows)
LATE_FILTER = 16


@dataclass
class Segments:
    """The (node, key) runs of both CSR directions; `pool` = out-neighbours then
    in-neighbours, so a segment is pool[start : start + ln]."""

    pool: np.ndarray
    ptr: tuple[np.ndarray, np.ndarray]  # per direction: segments of node v: ptr[v]..ptr[v+1]
    start: tuple[np.ndarray, np.ndarray]
    ln: tuple[np.ndarray, np.ndarray]
    key: tuple[np.ndarray, np.ndarray]  # rank(relation) * 2 + forward
    rcode: tuple[np.ndarray, np.ndarray]  # node * R + relation id (ascending: the CSR order)


def _runs(node: np.ndarray, rel: np.ndarray, n: int, r_n: int, base: int):
    """Segments of one direction's CSR (rows sorted by (node, rel, neighbour)): (ptr,
    start in the pool, length, row of the first edge, node * r_n + rel)."""
    if not len(node):
        z = np.zeros(0, dtype=np.int64)
        return np.zeros(n + 1, dtype=np.int64), z, z, z, z
    new = np.empty(len(node), dtype=bool)
    new[0] = True
    new[1:] = (node[1:] != node[:-1]) | (rel[1:] != rel[:-1])
    start = np.flatnonzero(new)
    ln = np.diff(np.append(start, len(node)))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(node[start], minlength=n), out=ptr[1:])
    rcode = node[start].astype(np.int64) * r_n + rel[start]
    return ptr, start + base, ln, start, rcode


def segment_table(g: ArrayClusteredGraph) -> Segments:
    """The graph's segments (computed once per graph: O(edges))."""
    got = getattr(g, "_segments", None)
    if got is not None:
        return got
    n, rank, r_n = g.n, g.rel_rank, max(len(g.rel_names), 1)
    pool = np.concatenate([g.odst, g.isrc]).astype(np.int64, copy=False)
    done = None
    # by edges (MetaQA's stay below: no numba)
    if use_jit(len(g.odst), segments.MIN_ROWS) and segments.runs_ready():
        # the two directions at once (the loop releases the GIL: ~6 -> ~3.5 ms at 10M)
        o, i = run_parallel(
            [
                partial(segments.runs, g.optr, g.orel, rank, n, r_n, 0, 1),
                partial(segments.runs, g.iptr, g.irel, rank, n, r_n, len(g.odst), 0),
            ]
        )
        done = None if o is None or i is None else (o, i)
    if done is not None:
        (optr, ostart, oln, okey, ocode), (iptr, istart, iln, ikey, icode) = done
    else:
        out_node = np.repeat(np.arange(n, dtype=np.int64), np.diff(g.optr))
        optr, ostart, oln, orow, ocode = _runs(out_node, g.orel, n, r_n, 0)
        iptr, istart, iln, irow, icode = _runs(g.idst, g.irel, n, r_n, len(g.odst))
        okey = (rank[g.orel[orow]] * 2 + 1 if len(orow) else orow).astype(np.int64, copy=False)
        ikey = (rank[g.irel[irow]] * 2 if len(irow) else irow).astype(np.int64, copy=False)
    got = Segments(pool, (optr, iptr), (ostart, istart), (oln, iln), (okey, ikey), (ocode, icode))
    g._segments = got  # type: ignore[attr-defined]
    return got


def segment_hashes(g: ArrayClusteredGraph, hv: np.ndarray) -> np.ndarray:
    """Prefix sums of the node hashes `hv` over the segment pool (uint64, wrapping), so a
    segment's set hash is a difference; cached on the graph for this hv."""
    got = getattr(g, "_segment_hashes", None)
    if got is not None and got[0] is hv:
        return got[1]
    pool = segment_table(g).pool
    cum_h = segments.prefix_hashes(pool, hv) if use_jit(len(pool), segments.MIN_ROWS) else None
    if cum_h is None:
        cum_h = np.zeros(len(pool) + 1, dtype=np.uint64)
        np.cumsum(hv[pool], out=cum_h[1:])
    g._segment_hashes = (hv, cum_h)  # type: ignore[attr-defined]
    return cum_h


#: per CSR direction (out, in): (which queries, first row in the pool, row count)
KeyRows = list[tuple[np.ndarray, np.ndarray, np.ndarray]]


def key_rows(g: ArrayClusteredGraph, nodes: np.ndarray, codes: np.ndarray) -> KeyRows:
    """The pool rows of nodes[i] by key code codes[i] (rank(relation) * 2 + forward): each
    is one segment, found by a binary search among the direction's segment codes; forward
    keys read the out-edges. A node without that key has 0 rows."""
    sg = segment_table(g)
    r_n = max(len(g.rel_names), 1)
    q = nodes * r_n + np.argsort(g.rel_rank)[codes >> 1]
    out = []
    for d, fwd in ((0, 1), (1, 0)):
        m = (codes & 1) == fwd
        rc, qm = sg.rcode[d], q[m]
        if not len(rc):
            z = np.zeros(len(qm), dtype=np.int64)
            out.append((m, z, z))
            continue
        i = np.minimum(np.searchsorted(rc, qm), len(rc) - 1)
        hit = rc[i] == qm
        out.append((m, np.where(hit, sg.start[d][i], 0), np.where(hit, sg.ln[d][i], 0)))
    return out


@dataclass
class Expanded:
    """Entries (u * k2 + key, sorted) of distinct sets u; entry i's reached set is
    pool[a[i] : a[i] + ln[i]] (sorted, distinct); h its set hash. `pool` starts with
    Segments.pool (`shared` elements), which sets reference in place, and continues with
    the merged sets. `estart`: the entries of u are estart[u] .. estart[u + 1] (set by
    distinct.expand_distinct once its batches are joined)."""

    code: np.ndarray
    a: np.ndarray
    ln: np.ndarray
    h: np.ndarray
    pool: np.ndarray
    shared: int
    estart: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


class Pool:
    """A level's append-only node buffer: the segment pool first (`shared`), then the
    merged sets as they are made. Growth doubles the buffer, so appending costs amortised
    O(appended) (a concatenation per batch and per chunk copied the whole pool each time);
    views handed out earlier stay valid (a regrown buffer is a new array)."""

    def __init__(self, shared: np.ndarray, room: int | None = None):
        self.shared = len(shared)
        # room for merged sets: `room` (a level's member rows, which bound what its expansion
        # writes; regrowing copied the shared part again, ~1 ms per 10^5 rows), else a
        # quarter of the shared part. Unwritten room is never touched, so costs no pages.
        extra = max(len(shared) // 4, 1 << 12) if room is None else max(room, 1 << 12)
        self.buf = np.empty(len(shared) + extra, dtype=np.int64)
        self.buf[: len(shared)] = shared
        self.used = len(shared)

    def reserve(self, extra: int) -> None:
        """Room for `extra` more nodes after `used` (a writer may fill buf[used:] in place,
        then advance `used`)."""
        need = self.used + extra
        if need > len(self.buf):
            grown = np.empty(max(need, 2 * len(self.buf)), dtype=np.int64)
            grown[: self.used] = self.buf[: self.used]
            self.buf = grown

    def append(self, x: np.ndarray) -> int:
        """Appends x; returns where it starts."""
        self.reserve(len(x))
        need = self.used + len(x)
        at = self.used
        self.buf[at:need] = x
        self.used = need
        return at

    def view(self) -> np.ndarray:
        return self.buf[: self.used]


def expand_segments(
    g: ArrayClusteredGraph,
    members: np.ndarray,
    owner: np.ndarray,
    keep: np.ndarray,
    hv: np.ndarray,
    bad_cum: np.ndarray,
    out: Pool | None = None,
    only: np.ndarray | None = None,
) -> Expanded:
    """The (u, key) entries of the sets given as members with their owner u (members of one
    owner together, owners ascending). `bad_cum`: prefix counts of not-kept nodes over
    Segments.pool (which segments a filter touches). Merged sets are appended to `out`
    (default: a new Pool over the segment pool); the entries' `a` index its buffer.
    `only`: sorted owner * k2 + key codes, the only groups wanted."""
    sg, cum_h = segment_table(g), segment_hashes(g, hv)
    n, k2 = g.n, 2 * max(len(g.rel_names), 1)
    out = Pool(sg.pool) if out is None else out
    rows = int(g.degree[members].sum())
    if use_jit(rows, segments.MIN_ROWS):
        out.reserve(rows)  # the merged sets are written into the pool's buffer in place
        got = segments.expand(
            members, owner, sg, keep, hv, cum_h, bad_cum, n, k2, out.buf, out.used, only
        )
        if got is not None:
            code, a, size, h, count = got
            out.used += count
            return Expanded(code, a, size, h, out.view(), out.shared)
    parts = []
    for d in (0, 1):
        ptr = sg.ptr[d]
        cnt = ptr[members + 1] - ptr[members]
        sid = ranges(ptr[members], cnt)
        parts.append((np.repeat(owner, cnt) * k2 + sg.key[d][sid], sg.start[d][sid], sg.ln[d][sid]))
    gc, st, ln = (np.concatenate(x) for x in zip(*parts, strict=True))
    if only is not None:
        wanted = member_sorted(only, gc)
        gc, st, ln = gc[wanted], st[wanted], ln[wanted]
    order = np.argsort(gc, kind="stable")  # two nearly sorted runs (owners ascending)
    gc, st, ln = gc[order], st[order], ln[order]
    if not len(gc):
        z = np.zeros(0, dtype=np.int64)
        return Expanded(z, z, z, np.zeros(0, dtype=np.uint64), out.view(), out.shared)
    head = np.empty(len(gc), dtype=bool)
    head[0] = True
    np.not_equal(gc[1:], gc[:-1], out=head[1:])
    heads = np.flatnonzero(head)
    nseg = np.diff(np.append(heads, len(gc)))
    s0, l0 = st[heads], ln[heads]
    clean = (nseg == 1) & (bad_cum[s0 + l0] == bad_cum[s0])
    code = gc[heads]
    a = s0.copy()
    size = l0.copy()
    h = cum_h[s0 + l0] - cum_h[s0]
    pool = sg.pool
    merge = np.flatnonzero(~clean)
    if len(merge):  # the rows of the other groups: gathered, filtered, sorted per group
        g_of_seg = np.repeat(np.arange(len(heads), dtype=np.int64), nseg)
        nbad = bad_cum[st + ln] - bad_cum[st]
        segs = np.flatnonzero(~clean[g_of_seg] & (nbad < ln))  # not wholly filtered out
        local = np.cumsum(~clean) - 1  # index of each merged group among the merged
        nodes, msize, mh = _union_groups(
            pool,
            st[segs],
            ln[segs],
            local[g_of_seg[segs]],
            len(merge),
            keep,
            hv,
            n,
            int(nbad[segs].sum()),
        )
        ma = np.zeros(len(merge), dtype=np.int64)
        np.cumsum(msize[:-1], out=ma[1:])
        a[merge] = ma + out.append(nodes)
        size[merge] = msize
        h[merge] = mh
        live = size > 0
        if not live.all():
            code, a, size, h = code[live], a[live], size[live], h[live]
    return Expanded(code, a, size, h, out.view(), out.shared)


def expand_many(
    g: ArrayClusteredGraph,
    jobs: list[tuple[np.ndarray, np.ndarray]],
    keep: np.ndarray,
    hv: np.ndarray,
    bad_cum: np.ndarray,
    out: Pool,
    n_threads: int = 1,
    rows: list[int] | None = None,
) -> list[Expanded]:
    """expand_segments of each (members, owner) job, in order, over one pool. With the
    compiled loop and n_threads > 1 the jobs run at once (the loop releases the GIL),
    each writing its merged sets into its own stretch of the pool's buffer (room for its
    member rows: `rows`, each job's, when the caller has summed them already); the
    stretches are then moved together, so the pool and the entries are exactly what
    running the jobs one after the other gives."""
    if n_threads < 2 or len(jobs) < 2:
        return [expand_segments(g, m, o, keep, hv, bad_cum, out) for m, o in jobs]
    if rows is None:
        rows = [int(g.degree[m].sum()) for m, _ in jobs]
    if not use_jit(sum(rows), segments.MIN_ROWS) or not segments.available():
        return [expand_segments(g, m, o, keep, hv, bad_cum, out) for m, o in jobs]
    sg, cum_h = segment_table(g), segment_hashes(g, hv)
    n, k2 = g.n, 2 * max(len(g.rel_names), 1)
    out.reserve(sum(rows))
    buf, starts = out.buf, (out.used + np.cumsum([0, *rows[:-1]])).tolist()

    def run(i: int):
        m, o = jobs[i]
        return segments.expand(m, o, sg, keep, hv, cum_h, bad_cum, n, k2, buf, starts[i])

    got = run_parallel([partial(run, i) for i in range(len(jobs))], n_threads)
    parts = []
    for start, res in zip(starts, got, strict=True):
        assert res is not None  # (segments.available() said the loop is compiled)
        code, a, size, h, count = res
        at = out.used
        if start != at:  # move this job's merged sets down to the end of the previous one's
            buf[at : at + count] = buf[start : start + count]
            a = np.where(a >= start, a - (start - at), a)
        out.used += count
        parts.append(Expanded(code, a, size, h, out.view(), out.shared))
    return parts


def member_sorted(sorted_values: np.ndarray, q: np.ndarray) -> np.ndarray:
    """q in sorted_values, elementwise (np.isin sorts q as well; this only searches)."""
    if not len(sorted_values):
        return np.zeros(len(q), dtype=bool)
    i = np.minimum(np.searchsorted(sorted_values, q), len(sorted_values) - 1)
    return sorted_values[i] == q


def _union_groups(pool, st, ln, grp, n_groups, keep, hv, n, n_bad):
    """The union of each group's segments pool[st : st + ln] (segments ordered by group),
    keep applied: (nodes, group after group, sorted within), size and hash per group; by
    one sort of packed (group, node) codes (timsort: they come grouped, with sorted runs
    inside). `n_bad`: how many rows keep drops. The numpy form of kernels/segments' merge."""
    nb = pool[ranges(st, ln)]
    gr = np.repeat(grp, ln)
    late = 0 < n_bad * LATE_FILTER < len(nb)  # few rows to drop: drop them once distinct
    if n_bad and not late:
        ok = keep[nb]
        gr, nb = gr[ok], nb[ok]
    w = bits(n)  # (group, node) packed by shifts: unpacking by division costs ~10x
    mask = (1 << w) - 1
    codes = distinct_sorted(np.sort((gr << w) | nb, kind="stable"))
    if late:
        codes = codes[keep[codes & mask]]
    mg, nodes = codes >> w, codes & mask
    size = np.bincount(mg, minlength=n_groups)
    start = np.zeros(n_groups, dtype=np.int64)
    np.cumsum(size[:-1], out=start[1:])
    h = np.zeros(n_groups, dtype=np.uint64)
    nz = size > 0
    if nz.any():
        h[nz] = np.add.reduceat(hv[nodes], start[nz])
    return nodes, size, h
