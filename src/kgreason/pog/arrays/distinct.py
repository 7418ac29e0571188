"""The entries of a level's distinct sets, read from the graph, for steps.LevelSteps.

Why apart: steps.py turns a level's partial paths into their clustered steps (the
backtracking filter, relation clustering, the order); what it reads from the graph for
that is here: each distinct set's (key, reached set) entries, in batches of edge rows or
one part per kernel thread (`expand_distinct`, over pog/arrays/segments.py), the not-kept
nodes' prefix counts those reads filter with (`KeptPrefix`), and the keys by which a
level's sets reach one node (`keys_reaching`: a segment search's target, or a free
search's start under Budget.revisit_when_empty).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kgreason.jit import threads
from kgreason.kg.store.build_index import ranges
from kgreason.pog.arrays.segments import Expanded, Pool, expand_many, segment_table
from kgreason.pog.arrays.set_ids import unique_sorted

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import ArrayClusteredGraph

#: the per-entry fields of segments.Expanded
_ENTRY = ("code", "a", "ln", "h")
#: edge rows gathered per batch of distinct sets
BATCH_ROWS = 1 << 21
#: member rows from which a level's expansion is split over the kernel threads (a part
#: is at least half this: a thread costs ~0.1 ms, the loop ~4 ns per row)
PARALLEL_ROWS = 500_000


class KeptPrefix:
    """The not-kept nodes' prefix counts over the segment pool (`bad_cum`, which says which
    segments a filter touches), kept for the levels of one search. The free search keeps the
    same nodes at every length, and recounting took ~1.3 ms a level at 10M (a gather and a
    cumsum of 400k rows into fresh pages); the segment search's mask changes per length."""

    def __init__(self) -> None:
        self._keep: np.ndarray | None = None
        self._cum: np.ndarray | None = None

    def of(self, g: ArrayClusteredGraph, keep: np.ndarray) -> np.ndarray:
        """bad_cum for this mask (the same array object as the last call: the same counts)."""
        if self._cum is None or self._keep is not keep:
            seg_pool = segment_table(g).pool
            cum = np.zeros(len(seg_pool) + 1, dtype=np.int64)
            np.cumsum(~keep[seg_pool], out=cum[1:])
            self._keep, self._cum = keep, cum
        return self._cum


def expand_distinct(
    g: ArrayClusteredGraph,
    nodes: np.ndarray,
    off: np.ndarray,
    reps: np.ndarray,
    keep: np.ndarray,
    hv: np.ndarray,
    bad_cum: np.ndarray,
    pool: Pool | None = None,
) -> Expanded:
    """The entries of the sets reps (their index u = position in reps), in batches of about
    BATCH_ROWS edge rows (pog/arrays/segments.py reads segments, and rows only where it merges),
    or one batch per kernel thread for a level of PARALLEL_ROWS rows or more (run at once,
    same output); merged sets are appended to `pool` (default: a new one over the
    segment pool)."""
    k2 = 2 * max(len(g.rel_names), 1)
    pool = Pool(segment_table(g).pool) if pool is None else pool
    lens = off[reps + 1] - off[reps]
    deg = np.add.reduceat(g.degree[nodes].astype(np.int64), off[:-1])[reps] if len(reps) else lens
    deg = np.where(lens > 0, deg, 0)
    cum = np.cumsum(deg)
    n_threads, batch = threads(), BATCH_ROWS
    if n_threads > 1 and len(cum) and cum[-1] >= PARALLEL_ROWS:  # parts for the threads
        batch = min(batch, max(-(-int(cum[-1]) // n_threads), PARALLEL_ROWS // 2))
    jobs: list[tuple[np.ndarray, np.ndarray]] = []
    rows: list[int] = []  # each job's member rows (what expand_many reserves for it)
    u0 = 0
    while u0 < len(reps) or not jobs:
        base = cum[u0 - 1] if u0 else 0
        u1 = max(int(np.searchsorted(cum, base + batch, side="right")), u0 + 1)
        u1 = min(u1, len(reps))
        sel = reps[u0:u1]
        members = nodes[ranges(off[sel], lens[u0:u1])]
        jobs.append((members, np.repeat(np.arange(u0, u1, dtype=np.int64), lens[u0:u1])))
        rows.append(int(cum[u1 - 1] - base) if u1 > u0 else 0)
        u0 = max(u1, u0 + 1)
    parts = expand_many(g, jobs, keep, hv, bad_cum, pool, n_threads, rows)
    out = _join(parts, pool)
    out.estart = np.searchsorted(out.code // k2, np.arange(len(reps) + 1))
    return out


def _join(parts: list[Expanded], pool: Pool) -> Expanded:
    """The entries of `parts` in order, over `pool` (which holds every part's sets)."""
    if len(parts) == 1:
        e = parts[0]
        e.pool = pool.view()
        return e
    code, a, ln, h = (np.concatenate([getattr(e, f) for e in parts]) for f in _ENTRY)
    return Expanded(code, a, ln, h, pool.view(), pool.shared)


def _append(x: Expanded | None, y: Expanded) -> Expanded:
    """x's entries then y's (y.estart relative to y; both over one level Pool)."""
    if x is None:
        return y
    code, a, ln, h = (np.concatenate([getattr(x, f), getattr(y, f)]) for f in _ENTRY)
    estart = np.concatenate([x.estart[:-1], y.estart + len(x.code)])
    return Expanded(code, a, ln, h, y.pool, y.shared, estart)


def keys_reaching(
    g: ArrayClusteredGraph, members: np.ndarray, owner: np.ndarray, t: int, k2: int
) -> np.ndarray:
    """owner * k2 + key, sorted and distinct, for every member with an edge by `key` to t:
    t's own segments read backwards (t -(key)-> x is x -(key ^ 1)-> t). Only the members
    next to t are searched (a level's 30k-70k members, ~1k of them next to t, took 3-6 ms
    a call at 10M when every member was searched twice)."""
    sg = segment_table(g)
    xs, ks = [], []
    for d in (0, 1):
        s0, s1 = int(sg.ptr[d][t]), int(sg.ptr[d][t + 1])
        ln = sg.ln[d][s0:s1]
        xs.append(sg.pool[ranges(sg.start[d][s0:s1], ln)])
        ks.append(np.repeat(sg.key[d][s0:s1] ^ 1, ln))
    x, kk = np.concatenate(xs), np.concatenate(ks)
    near = np.zeros(g.n, dtype=bool)
    near[x] = True
    at = np.flatnonzero(near[members])
    order = np.argsort(x, kind="stable")
    x, kk = x[order], kk[order]
    lo = np.searchsorted(x, members[at], side="left")
    cnt = np.searchsorted(x, members[at], side="right") - lo
    return unique_sorted(np.repeat(owner[at], cnt) * k2 + kk[ranges(lo, cnt)])
