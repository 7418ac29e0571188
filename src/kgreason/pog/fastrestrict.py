"""paths._restrict for a whole level of found segments at once, on arrays (see fastpaths).

Split from pog/fastpaths.py (the forward search); the kept sets become NameSets, so no name
is decoded here (pog/lazyhop.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.pog.fastsets import _hash_sets, _member, canon, unique_sorted
from kgreason.pog.lazyhop import HopMaker, NameSet
from kgreason.pog.types import Hop

if TYPE_CHECKING:
    from kgreason.pog.fastgraph import ArrayClusteredGraph
    from kgreason.pog.fastpaths import _Level


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
    n = g.n
    k = len(levels)  # length of the found paths; levels[j] holds the sets after j hops
    f_n = len(hits)
    anc = np.array([p for p, _ in hits], dtype=np.int64)  # ancestor at level j (j = k - 1)
    group = [c for _, c in hits]
    # the kept sets after j + 1 hops: pool[start[i] : start[i] + len[i]], and each path's i
    pool, start, lens = np.array([t], dtype=np.int64), np.zeros(1, np.int64), np.ones(1, np.int64)
    kid = np.zeros(f_n, dtype=np.int64)
    kept = [(pool, start, lens, kid)]
    groups_per_level = [group]
    for j in range(k - 1, -1, -1):
        gid: dict[tuple[int, ...], int] = {}
        gi = np.array([gid.setdefault(c, len(gid)) for c in group], dtype=np.int64)
        dpair, d_of_f = np.unique(kid * len(gid) + gi, return_inverse=True)
        dk, dg = np.divmod(dpair, len(gid))
        glist = list(gid)
        near = _near(g, pool, start, lens, dk, [glist[x] for x in dg.tolist()])
        epair, e_of_f = np.unique(anc * len(dk) + d_of_f.reshape(-1), return_inverse=True)
        ea, ed = np.divmod(epair, len(dk))
        lv, off = levels[j], levels[j].offsets()
        mem = lv.nodes[ranges(off[ea], lv.lens[ea])]
        eown = np.repeat(np.arange(len(ea)), lv.lens[ea])
        inn = _member(near, ed[eown] * n + mem)
        pool, lens = mem[inn], np.bincount(eown[inn], minlength=len(ea)).astype(np.int64)
        start = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        kid = canon(pool, start, lens, _hash_sets(node_hash, pool, start, lens))
        kid = kid[e_of_f.reshape(-1)]  # equal kept sets share one id (and one expansion)
        kept.append((pool, start, lens, kid))
        if j:
            group = [levels[j].groups[p] for p in anc.tolist()]
            groups_per_level.append(group)
            anc = levels[j].parent[anc]
    kept.reverse()  # kept[j]: the members after j hops
    groups_per_level.reverse()  # [j]: the hop from set j to set j + 1
    # equal kept sets share one NameSet (sets() shares equal ranges); hops made per level
    named: list[list[NameSet]] = []
    for pool_j, start_j, lens_j, kid_j in kept:
        a = start_j[kid_j]
        named.append(maker.sets(pool_j, a, a + lens_j[kid_j]))
    per_level = [
        maker.hops(
            named[j],
            [maker.keys(c) for c in groups_per_level[j]],
            named[j + 1],
            [c[0] for c in groups_per_level[j]],
        )
        for j in range(k)
    ]
    return list(zip(*per_level, strict=True))


def _near(
    g: ArrayClusteredGraph,
    pool: np.ndarray,
    start: np.ndarray,
    lens: np.ndarray,
    dk: np.ndarray,
    groups: list[tuple[int, ...]],
) -> np.ndarray:
    """Sorted d * n + u for every u reachable back from kept set dk[d] through the reverse
    of a key of groups[d] (d: a distinct (kept set, hop group) pair). Reads only the edge
    rows of those keys: each (member, relation) row range is found by a binary search in
    the (node, relation)-sorted CSRs (`_by_rel`), instead of reading every edge of every
    member and filtering (the kept sets at a level overlap, and t is often a hub)."""
    n = g.n
    r_n = max(len(g.rel_names), 1)
    rank_rel = np.argsort(g.rel_rank)
    bd = np.array([d for d, cs in enumerate(groups) for _ in cs], dtype=np.int64)
    bc = np.array([c ^ 1 for cs in groups for c in cs], dtype=np.int64)
    s = dk[bd]  # the kept set each (d, reversed key) entry reads
    cnt = lens[s]
    e = np.repeat(np.arange(len(bd)), cnt)
    v = pool[ranges(start[s], cnt)]  # (entry, member) queries
    code = bc[e]
    q = v * r_n + rank_rel[code >> 1]
    out_hr, in_hr = _by_rel(g)
    parts = []
    for fwd, keys, nbr in ((1, out_hr, g.odst), (0, in_hr, g.isrc)):
        m = (code & 1) == fwd
        qm = q[m]
        lo = np.searchsorted(keys, qm, side="left")
        k = np.searchsorted(keys, qm, side="right") - lo
        parts.append(np.repeat(bd[e[m]], k) * n + nbr[ranges(lo, k)])
    return unique_sorted(np.concatenate(parts))


def _by_rel(g: ArrayClusteredGraph) -> tuple[np.ndarray, np.ndarray]:
    """node * R + relation of every out-edge row and every in-edge row (sorted: the CSRs
    are sorted by (node, relation)), cached on the graph."""
    got = getattr(g, "_by_rel", None)
    if got is None:
        r_n = max(len(g.rel_names), 1)
        got = (
            g.h.astype(np.int64) * r_n + g.orel,
            g.idst.astype(np.int64) * r_n + g.irel,
        )
        g._by_rel = got  # type: ignore[attr-defined]
    return got
