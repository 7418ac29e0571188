"""paths._restrict for a whole level of found segments at once, on arrays (see search).

Split from pog/arrays/search.py (the forward search); the kept sets become NameSets, so no name
is decoded here (pog/arrays/hops.py). Which members of a set are kept (`kept_members`) reads
only the edge rows of the hop's keys, each (node, key) one segment of the graph's segment
index (pog/arrays/segments.key_rows), from the side that reads fewer rows: before it was rewritten it read every edge of
every kept set once per hop group paired with it (the target, often a hub, once per group).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kgreason.jit import use_jit
from kgreason.kg.store.build_index import ranges
from kgreason.pog.arrays.hop_maker import HopMaker
from kgreason.pog.arrays.hops import NameSet
from kgreason.pog.arrays.kernels.paths import KEPT_MIN_ROWS, kept, near_members
from kgreason.pog.arrays.segments import KeyRows, key_rows, segment_table
from kgreason.pog.arrays.set_ids import _hash_sets, canon
from kgreason.pog.arrays.steps import _member
from kgreason.pog.types import Hop

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import ArrayClusteredGraph
    from kgreason.pog.arrays.levels import _Level


def restrict(
    g: ArrayClusteredGraph,
    maker: HopMaker,
    levels: list[_Level],
    hits: list[tuple[int, tuple[int, ...]]],
    t: int,
    node_hash: np.ndarray,
) -> list[tuple[Hop, ...]]:
    """paths._restrict for every segment found at one length: walking back from t through
    the reversed keys, keep the members of each set with an edge into the kept next set.

    Found paths share kept sets (all start from {t}) and ancestors, so each level expands
    each distinct (kept set, hop group) once, and intersects each distinct (ancestor set,
    neighbour set) once; a found path only carries the ids of its kept sets."""
    if not hits:
        return []
    k = len(levels)  # length of the found paths; levels[j] holds the sets after j hops
    f_n = len(hits)
    anc = np.array([p for p, _ in hits], dtype=np.int64)  # ancestor at level j (j = k - 1)
    group = [c for _, c in hits]
    # the kept sets after j + 1 hops: pool[start[i] : start[i] + len[i]], and each path's i
    pool, start, lens = np.array([t], dtype=np.int64), np.zeros(1, np.int64), np.ones(1, np.int64)
    kid = np.zeros(f_n, dtype=np.int64)
    kept = [(pool, start, lens, kid)]
    groups_per_level = []  # per level: (each path's group id, the distinct groups)
    gi, glist = _group_ids(group)  # the last hop's groups (the hits')
    for j in range(k - 1, -1, -1):
        groups_per_level.append((gi, glist))
        dpair, d_of_f = np.unique(kid * len(glist) + gi, return_inverse=True)
        dk, dg = np.divmod(dpair, len(glist))
        epair, e_of_f = np.unique(anc * len(dk) + d_of_f.reshape(-1), return_inverse=True)
        ea, ed = np.divmod(epair, len(dk))
        lv, off = levels[j], levels[j].offsets()
        mem = lv.nodes[ranges(off[ea], lv.lens[ea])]
        eown = np.repeat(np.arange(len(ea)), lv.lens[ea])
        sets = (pool, start, lens)
        inn = kept_members(g, sets, dk, [glist[x] for x in dg.tolist()], mem, ed[eown])
        pool, lens = mem[inn], np.bincount(eown[inn], minlength=len(ea)).astype(np.int64)
        start = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        kid = canon(pool, start, lens, _hash_sets(node_hash, pool, start, lens))
        kid = kid[e_of_f.reshape(-1)]  # equal kept sets share one id (and one expansion)
        kept.append((pool, start, lens, kid))
        if j:  # the groups of the hop into level j: read once per distinct ancestor
            gi, glist = _ancestor_group_ids(levels[j].groups, anc)
            anc = levels[j].parent[anc]
    kept.reverse()  # kept[j]: the members after j hops
    groups_per_level.reverse()  # [j]: the hop from set j to set j + 1
    # equal kept sets share one NameSet, and equal hops (same kept sets, same group) of a
    # level one LazyHop: made once per distinct (set, group, set) of the level
    named: list[list[NameSet]] = []
    for pool_j, start_j, lens_j, kid_j in kept:
        a = start_j[kid_j]
        named.append(maker.sets(pool_j, a, a + lens_j[kid_j]))
    per_level = [
        _shared_hops(maker, named[j], groups_per_level[j], named[j + 1], kept[j][3], kept[j + 1][3])
        for j in range(k)
    ]
    return list(zip(*per_level, strict=True))


def _group_ids(groups: list[tuple[int, ...]]) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """(an id per group, equal groups one id; the distinct groups, by id). Groups are
    mostly the same few tuple objects (HopMaker.groups caches them per code): the distinct
    objects are found by identity first, then merged by value."""
    obj = np.fromiter(map(id, groups), dtype=np.int64, count=len(groups))
    _, first, inv = np.unique(obj, return_index=True, return_inverse=True)
    seen = np.argsort(first)  # ids numbered in order of first appearance, as a dict would
    gid: dict[tuple[int, ...], int] = {}
    by_obj = np.empty(len(first), dtype=np.int64)
    for o in seen.tolist():
        by_obj[o] = gid.setdefault(groups[int(first[o])], len(gid))
    return by_obj[inv.reshape(-1)], list(gid)


def _ancestor_group_ids(
    groups: Sequence[tuple[int, ...]], anc: np.ndarray
) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """_group_ids([groups[p] for p in anc]), reading each distinct ancestor's group once
    (distinct ancestors taken in order of first appearance: the same ids)."""
    u, first, inv = np.unique(anc, return_index=True, return_inverse=True)
    seen = np.argsort(first)
    gi_u, glist = _group_ids([groups[p] for p in u[seen].tolist()])
    by_u = np.empty(len(u), dtype=np.int64)
    by_u[seen] = gi_u
    return by_u[inv.reshape(-1)], glist


def _shared_hops(
    maker: HopMaker,
    srcs: list[NameSet],
    grouping: tuple[np.ndarray, list[tuple[int, ...]]],
    dsts: list[NameSet],
    src_kid: np.ndarray,
    dst_kid: np.ndarray,
) -> list[Hop]:
    """maker.hops(srcs, keys of each path's group, dsts, primary codes), one LazyHop per
    distinct (src kept set id, group, dst kept set id): found paths share most hops."""
    gi, glist = grouping
    n_d = int(dst_kid.max()) + 1 if len(dst_kid) else 1
    code = (src_kid * len(glist) + gi) * n_d + dst_kid
    _, first, inv = np.unique(code, return_index=True, return_inverse=True)
    f = first.tolist()
    keys = [maker.keys(c) for c in glist]
    made = maker.hops(
        [srcs[i] for i in f],
        [keys[x] for x in gi[first].tolist()],
        [dsts[i] for i in f],
        [glist[x][0] for x in gi[first].tolist()],
    )
    # an object array's gather (filling one from a list of objects probes each for the
    # array protocols: np.fromiter does not)
    return np.fromiter(made, dtype=object, count=len(made))[inv.reshape(-1)].tolist()  # type: ignore[no-any-return]


def kept_members(
    g: ArrayClusteredGraph,
    sets: tuple[np.ndarray, np.ndarray, np.ndarray],
    dk: np.ndarray,
    groups: list[tuple[int, ...]],
    mem: np.ndarray,
    d_of: np.ndarray,
    way: str = "",
    jit: bool | None = None,
) -> np.ndarray:
    """For each member mem[i] of an ancestor set, paired with d = d_of[i]: has it an edge
    of a key of groups[d] into kept set dk[d] (`sets`: the kept sets side by side, each
    sorted, as (pool, start, lens))? Reads only the edge rows of those keys: each (node,
    relation) row range is one segment of the graph (pog/arrays/segments.key_rows). Either
    forward from the members (their rows of the group's keys, each neighbour looked up in
    the kept set) or backward from the kept sets (their rows of the reversed keys, each
    member looked up), whichever reads fewer rows; forward is tried first, and kept
    without searching the backward rows, when its rows number no more than the backward
    lookups. A kept set holding a hub reaches far more backward than its pair's members
    reach forward, and the other way round; both ways give the same answer. `way`
    ("forward"/"backward") forces one (tests); backward, the membership test is
    kernels.paths.near_members (`jit` forces its compiled or numpy form). Unforced, the
    compiled kernels.paths.kept does it all in one loop (the way chosen per pair) once
    numba is loaded (`jit` forces it on or off)."""
    pool, start, lens = sets
    n, rows_pool = g.n, segment_table(g).pool
    bd = np.array([d for d, cs in enumerate(groups) for _ in cs], dtype=np.int64)
    bc = np.array([c for cs in groups for c in cs], dtype=np.int64)
    if not way and len(mem) and use_jit(len(mem), KEPT_MIN_ROWS, jit):
        got = kept(g, sets, dk, bd, bc, mem, d_of)
        if got is not None:
            return got
    s = dk[bd]
    d_lo = np.searchsorted(bd, np.arange(len(dk)))
    d_n = np.bincount(bd, minlength=len(dk))[d_of]
    n_fwd, n_back = int(d_n.sum()), int(lens[s].sum())  # queries each way
    fwd = None
    # forward first when it asks fewer queries: kept when its rows cost no more than the
    # backward lookups alone (the backward rows are then not even searched)
    if way == "forward" or (not way and n_fwd < n_back):
        fwd = _forward_rows(g, mem, d_of, d_n, d_lo, bc)
        if way == "forward" or _rows_of(fwd[2]) <= n_back:
            return _forward(fwd, sets, dk, bd, n, rows_pool, len(mem))
    # backward: (entry, kept member) queries through the reversed key
    e_b = np.repeat(np.arange(len(bd)), lens[s])
    back = key_rows(g, pool[ranges(start[s], lens[s])], bc[e_b] ^ 1)
    if not way:
        if fwd is None and n_fwd < _rows_of(back):
            fwd = _forward_rows(g, mem, d_of, d_n, d_lo, bc)
        if fwd is not None and _rows_of(fwd[2]) <= _rows_of(back):
            return _forward(fwd, sets, dk, bd, n, rows_pool, len(mem))
    rd = np.concatenate([bd[e_b[m]] for m, _, _ in back])
    rlo, rk = np.concatenate([lo for _, lo, _ in back]), np.concatenate([k for _, _, k in back])
    return near_members(d_of, mem, rd, rlo, rk, rows_pool, len(dk), n, jit)


def _forward_rows(g, mem, d_of, d_n, d_lo, bc) -> tuple[np.ndarray, np.ndarray, KeyRows]:
    """(member of each query, entry of each query, their key rows): (member, entry of its
    pair) queries through the entry's key."""
    row = np.repeat(np.arange(len(mem)), d_n)
    ent = ranges(d_lo[d_of], d_n)
    return row, ent, key_rows(g, mem[row], bc[ent])


def _forward(fwd, sets, dk, bd, n, rows_pool, n_mem) -> np.ndarray:
    """kept_members forward: each neighbour of a member looked up in its pair's kept set."""
    pool, start, lens = sets
    row, ent, rows = fwd
    kept_codes = np.repeat(np.arange(len(start)), lens) * n + pool  # sorted
    inn = np.zeros(n_mem, dtype=bool)
    for m, lo, k in rows:
        x = np.repeat(dk[bd[ent[m]]], k) * n + rows_pool[ranges(lo, k)]
        inn[np.repeat(row[m], k)[_member(kept_codes, x)]] = True
    return inn


def _rows_of(r: KeyRows) -> int:
    return sum(int(k.sum()) for _, _, k in r)
