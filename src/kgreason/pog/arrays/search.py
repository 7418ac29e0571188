"""Entity-path search (paths.py's rules) on an ArrayClusteredGraph's integer arrays.

Why: paths.py expands one partial path at a time, filters reached entities with a Python
predicate, groups equal sets as frozensets of names and restricts found segments member by
member. On a hub that is Python work per edge and per entity, times up to `max_paths`
partial paths (two-topic questions took minutes at 10M triples). Here a whole
level of partial paths is expanded at once:

- the sets of a level are stored side by side (`_Level.nodes`, each set sorted; local ids
  follow name order, so a sorted id array is a sorted name tuple); one gather over the CSR
  arrays gives every (partial path, key, neighbour) row, key = rank(relation) * 2 + forward
  (sorts like paths.py's (relation, forward) tuples);
- the filters (start, remaining distance to the target, avoided entities, no immediate
  backtracking) are boolean masks over those rows; `np.unique` on one int64 code per row
  yields, per partial path, its steps in key order with sorted reached sets;
- relation clustering (keys of one partial path reaching the same set are one hop) groups
  steps by a 64-bit set hash, verified exactly where a hash is shared;
- a segment ending at its target is restricted backwards for all found paths of a level at
  once, walking from the target (`restrict`, pog/arrays/restrict.py): only the edge rows of
  the hops' keys are read, from whichever side reads fewer.

Each DISTINCT set of a level is expanded once (pog/arrays/steps.py): partial paths ending
in the same set share its steps, except the keys reversing their last hop, which are
recomputed per partial path (two-topic questions at 10M triples hold 20,000 partial paths
per level over far fewer sets). `restrict` likewise works per distinct kept set.

The free search makes no object per step: it records each length's steps as arrays in a
FreeTable (pog/arrays/table.py), whose TablePaths make a path's hops (LazyHops over arrays of
local ids, pog/arrays/hops.py) when someone reads it, and render all paths' texts from the
arrays. The segment search makes the hops of a chunk of steps together (hop_maker.HopMaker's
groups, sets and hops: no Python call per step). No name is decoded here; a reader decodes
what it reads. Free paths come out already in find_entity_paths' order (`_order`: one
lexsort per level on the parent's place and the key). A level is processed in chunks of
partial paths so a bound that stops the search early also stops the reading. In the
segment search, once the next level has max_paths + 1 partial paths, or its first ones
already read more than max_level_rows edge rows (so it will not be searched), the rest of
the level is read for its hits only. Same paths, same order, same bounds and reasons as
paths.py (tests compare).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.pog.arrays.distinct import KeptPrefix
from kgreason.pog.arrays.hop_maker import HopMaker
from kgreason.pog.arrays.kernels.sums import range_sums
from kgreason.pog.arrays.levels import _Level, _node_hash, _RowSteps
from kgreason.pog.arrays.restrict import restrict
from kgreason.pog.arrays.steps import CHUNK_PATHS, LevelSteps, _Steps
from kgreason.pog.arrays.table import FreeTable
from kgreason.pog.types import Hop

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import ArrayClusteredGraph
    from kgreason.pog.path_budget import Budget


#: a level reading at most this many edge rows is expanded per partial path (_RowSteps)
SMALL_LEVEL_ROWS = 1 << 16


def _level_steps(
    g,
    lv: _Level,
    prev: _Level | None,
    keep: np.ndarray,
    rows: int,
    kept: KeptPrefix,
    t: int = -1,
    revisit: int = -1,
):
    """LevelSteps where a level reads many rows, _RowSteps where it reads few (`rows`: the
    edge rows of the level's sets, which the caller already summed for the level bound;
    `kept`: the search's cache of the mask's counts over the segment pool; `revisit`: the
    free search's start when Budget.revisit_when_empty, else -1)."""
    level: _RowSteps | LevelSteps
    if rows <= SMALL_LEVEL_ROWS:
        level = _RowSteps(g, lv, prev, keep, _node_hash(g), t)
    else:
        level = LevelSteps(g, lv, prev, keep, _node_hash(g), t, rows, kept)
    level.revisit = revisit
    return level


#: reached sets of one chunk: (sizes, members side by side, hashes or None)
Reached = tuple[np.ndarray, np.ndarray, np.ndarray | None]


def _next_level(
    parent: list[np.ndarray], groups: Sequence[tuple[int, ...]], sets: list[Reached], m: int
) -> _Level:
    """The level of the first m partial paths made (`parent`, `sets`: per chunk, in order;
    sets[c] holds chunk c's reached sets side by side, each sorted). The set hashes are
    carried over when every chunk has them (LevelSteps then need not hash the level)."""
    par = np.concatenate(parent)[:m] if parent else np.zeros(0, dtype=np.int64)
    lens = np.concatenate([x[0] for x in sets])[:m] if sets else np.zeros(0, dtype=np.int64)
    nodes = np.concatenate([x[1] for x in sets]) if sets else np.zeros(0, dtype=np.int64)
    hs = [x[2] for x in sets if x[2] is not None]
    h = np.concatenate(hs)[:m] if sets and len(hs) == len(sets) else None
    return _Level(par, groups[:m], lens, nodes[: int(lens.sum())], h)


def _reached(st: _Steps, idx: np.ndarray, t: int = -1, ht: np.uint64 | None = None) -> Reached:
    """(sizes, members side by side, hashes) of the sets of steps `idx` of `st`, t left out
    (`ht`: t's node hash, subtracted from the hash of the sets that held t)."""
    a, ln = st.a[idx], st.b[idx] - st.a[idx]
    nodes = st.nodes[ranges(a, ln)]
    h = None if st.h is None else st.h[idx]
    if t >= 0 and st.has_t is not None and st.has_t[idx].any():  # t is only in those sets
        keep = nodes != t
        own = np.repeat(np.arange(len(idx)), ln)
        ln = np.bincount(own[keep], minlength=len(idx))
        nodes = nodes[keep]
        if h is not None:  # without t's hash the sets' hashes are unknown
            h = None if ht is None else h - np.where(st.has_t[idx], ht, np.uint64(0))
    return ln.astype(np.int64), nodes, h


def free_paths(
    g: ArrayClusteredGraph, start: str, min_len: int, max_len: int, budget: Budget
) -> FreeTable | None:
    """paths._free_paths on arrays, as a FreeTable (pog/arrays/table.py): each length's steps
    are recorded as arrays, and the paths are the first steps of each length from min_len,
    in find_entity_paths' order (`_order`), so nothing is sorted or made per path here.
    None when `start` is not in the graph."""
    s = g.index.get(start)
    if s is None:
        budget.expansions += 1
        return None
    keep = np.ones(g.n, dtype=bool)
    keep[s] = False
    table = FreeTable(g, s)
    lv = _Level(np.array([-1]), [()], np.array([1]), np.array([s], dtype=np.int64))
    rank = np.zeros(1, dtype=np.int64)  # each partial path's place in the sorted order
    prev: _Level | None = None
    total = 0  # paths found at the shorter lengths
    kept = KeptPrefix()  # (keep is the same at every length)
    revisit = s if budget.revisit_when_empty else -1
    for k in range(1, max_len + 1):
        rows = int(g.degree[lv.nodes].sum())
        if budget.level_too_big(rows, len(lv.lens), k, f"from {start}"):
            return table
        parent: list[np.ndarray] = []
        sets: list[Reached] = []
        steps: list[tuple[np.ndarray, np.ndarray]] = []  # (p, primary key) of each chunk
        record = table.steps(k)
        made = found = 0  # partial paths of the next level made so far; paths found
        level = _level_steps(g, lv, prev, keep, rows, kept, revisit=revisit)
        for p0, p1 in level.chunks():
            st = level.steps(p0, p1)
            steps.append((st.p, st.key))
            m = len(st.p)
            room = budget.max_paths - total - found if k >= min_len else m
            if m > room:  # the bound stops the search at step `room` of this chunk
                m = room
            record.add(st, m)
            if k >= min_len:
                found += m
                if m < len(st.p):
                    budget.expansions += int(st.p[m]) + 1
                    budget.stop(f"max_paths={budget.max_paths} reached at length {k}")
                    table.found(k, _order(found, rank, steps))
                    return table
            if k < max_len:
                parent.append(st.p)
                sets.append(_reached(st, np.arange(m)))
                made += m
            if k < min_len and made > budget.max_paths:
                break  # the rest of this level would be cut by the bound anyway
        if k >= min_len:
            table.found(k, _order(found, rank, steps))
            total += found
        budget.expansions += len(lv.lens)
        if made > budget.max_paths:
            budget.stop(f"max_paths={budget.max_paths} partial paths at length {k}")
            made = budget.max_paths
        rank = _ranks(_order(made, rank, steps))
        groups = record.groups()[:made]
        prev, lv = lv, _next_level(parent, groups, sets, made)
        if not made:
            break
    return table


def segment_paths(
    g: ArrayClusteredGraph,
    s_name: str,
    t_name: str,
    max_len: int,
    budget: Budget,
    avoid: frozenset[str],
) -> list[tuple[Hop, ...]]:
    """paths._segment_paths on arrays. The next level's edge rows are summed as its partial
    paths are made: once they pass max_level_rows that level will not be searched, so the
    rest of this level is read for its hits only (`_NextLevel`)."""
    s, t = g.index.get(s_name), g.index.get(t_name)
    if s is None or t is None or not g.present[t]:
        return []
    dist = _distances_to(g, t, max_len)
    if dist[s] < 0:
        return []
    base = (dist >= 0) & (np.arange(g.n) != s)
    av = g.index.many(sorted(avoid))
    base[av[av >= 0]] = False
    maker = HopMaker(g)
    levels = [_Level(np.array([-1]), [()], np.array([1]), np.array([s], dtype=np.int64))]
    found: list[tuple[Hop, ...]] = []
    ht = _node_hash(g)[t]
    where = f"({s_name} -> {t_name})"
    rows, n_partial = int(g.degree[s]), 1
    if budget.level_prefix_too_big([rows], 1, where):
        return found
    pending: list[tuple[_Steps, np.ndarray]] | None = None  # the next level, not yet built
    kept = KeptPrefix()  # (recounts when the mask changes: every length here)
    for k in range(1, max_len + 1):
        if pending is not None:
            levels.append(_build_level(maker, pending, n_partial, t, ht))
        lv = levels[-1]
        prev = levels[-2] if len(levels) > 1 else None
        keep = base & (dist <= max_len - k)
        hits: list[tuple[int, tuple[int, ...]]] = []
        nxt = _NextLevel(g, t, budget)
        pending = nxt.pending
        stopped = False
        level = _level_steps(g, lv, prev, keep, rows, kept, t)
        chunks = deque(level.chunks())
        while chunks:
            p0, p1 = chunks.popleft()
            # once max_paths + 1 partial paths are made, or the next level is too big, the
            # rest of the level adds only hits (read in larger chunks: no bound stops there)
            full = k == max_len or not isinstance(level, LevelSteps) or not nxt.hits_only()
            while not full and chunks and chunks[0][1] - p0 <= CHUNK_PATHS:
                p1 = chunks.popleft()[1]
            st = level.steps(p0, p1) if full else level.steps(p0, p1, hits_only=True)
            assert st.has_t is not None
            hit = np.flatnonzero(st.has_t)
            room = budget.max_paths - len(found) - len(hits)
            end = len(st.p)
            if len(hit) > room:  # the bound stops the search at this step
                end, stopped = int(hit[room]), True
                budget.expansions += int(st.p[end]) + 1
                budget.stop(f"max_paths={budget.max_paths} reached {where}")
            hit = hit[: max(room, 0)]
            hits += zip(st.p[hit].tolist(), maker.groups(st, hit)[1], strict=True)
            if k < max_len and not stopped and not nxt.too_big:
                nxt.add(st, np.flatnonzero((st.b - st.a - st.has_t)[:end] > 0))
            if stopped:
                break
        found += restrict(g, maker, levels, hits, t, _node_hash(g))
        if stopped:
            return found
        budget.expansions += len(lv.lens)
        if not nxt.made:
            break
        if nxt.too_big:  # (reported before the partial-path bound: it is not searched)
            budget.level_prefix_too_big(nxt.prefix(), k + 1, where)
            return found
        if nxt.n_cont > budget.max_paths:
            budget.stop(
                f"max_paths={budget.max_paths} partial paths ({s_name} -> {t_name}, length {k})"
            )
        rows, n_partial = nxt.rows()
    return found


class _NextLevel:
    """The next level of a segment search as its partial paths are made: the continuing
    steps kept (`pending`: at most max_paths + 1, to see the bound), and the edge rows of
    the first max_paths of them, summed as they come so a level that is too big is known
    (`too_big`) before the rest of this one is read."""

    def __init__(self, g: ArrayClusteredGraph, t: int, budget: Budget):
        self.g, self.t, self.budget = g, t, budget
        self.pending: list[tuple[_Steps, np.ndarray]] = []
        self.made = self.n_cont = self.total = 0
        self.per: list[np.ndarray] = []  # each chunk's kept partial paths' rows

    @property
    def too_big(self) -> bool:
        """Whether the partial paths counted so far already read more than max_level_rows."""
        bound = self.budget.max_level_rows
        return bound is not None and self.total > bound

    def hits_only(self) -> bool:
        """Whether the rest of the current level adds only hits: max_paths + 1 partial
        paths are made, or the next level will not be searched."""
        return self.made > self.budget.max_paths or self.too_big

    def add(self, st: _Steps, cont: np.ndarray) -> None:
        self.n_cont += len(cont)
        cont = cont[: max(0, self.budget.max_paths + 1 - self.made)]
        self.pending.append((st, cont))
        counted = cont[: max(0, self.budget.max_paths - self.made)]
        self.made += len(cont)
        if len(counted):
            r = _cont_rows(self.g, st, counted, self.t)
            self.per.append(r)
            self.total += int(r.sum())

    def rows(self) -> tuple[int, int]:
        """(edge rows, partial paths) of the next level (the first max_paths made)."""
        return self.total, min(self.made, self.budget.max_paths)

    def prefix(self) -> list[int]:
        """The rows of each partial path counted, in order (once too_big)."""
        return np.concatenate(self.per).tolist()


def _cont_rows(g: ArrayClusteredGraph, st: _Steps, c: np.ndarray, t: int) -> np.ndarray:
    """The edge rows each continuing step c of `st` makes its partial path read (t left
    out of its set): what `g.degree[level.nodes]` sums to, per set, once it is built."""
    deg = g.degree.astype(np.int64, copy=False)
    got = range_sums(deg, st.nodes, st.a[c], st.b[c] - st.a[c])
    assert st.has_t is not None
    return got - int(deg[t]) * st.has_t[c]


def _distances_to(g: ArrayClusteredGraph, t: int, max_len: int) -> np.ndarray:
    """Undirected hop distances to local id t within max_len (-1: farther): those the
    two-topic reduction computed when g is its graph (arrays/reduction.connecting_subgraph, which
    says why they are g's own), else a search of g's undirected copy."""
    got = g.topic_distances
    if got is not None and max_len <= got[0] and t in got[1]:
        d = got[1][t]
        return np.where(d <= max_len, d, -1).astype(np.int64)
    return g.local_distances(t, max_len, g.undirected_cached())


def _build_level(
    maker: HopMaker, pending: list[tuple[_Steps, np.ndarray]], m: int, t: int, ht: np.uint64
) -> _Level:
    """The level of the first m continuing steps (t left out of their sets)."""
    parent = [st.p[c] for st, c in pending]
    groups: list[tuple[int, ...]] = []
    for st, c in pending:
        groups += maker.groups(st, c)[1]
    return _next_level(parent, groups, [_reached(st, c, t, ht) for st, c in pending], m)


def _order(m: int, rank: np.ndarray, steps: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The first m steps of a level (in the order made) sorted like find_entity_paths sorts
    paths, (relation, not forward) hop by hop: by the parent's place, then by key ^ 1
    (rank(relation) * 2 + backward). A parent's steps have distinct keys, so no ties."""
    if not m:
        return np.zeros(0, dtype=np.int64)
    p = np.concatenate([x for x, _ in steps])[:m]
    key = np.concatenate([y for _, y in steps])[:m]
    return np.lexsort((key ^ 1, rank[p]))


def _ranks(order: np.ndarray) -> np.ndarray:
    out = np.empty(len(order), dtype=np.int64)
    out[order] = np.arange(len(order))
    return out
