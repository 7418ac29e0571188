"""paths._restrict for a whole level of found segments at once, on arrays (see fastpaths).

Split from pog/fastpaths.py (the forward search); the kept sets become NameSets, so no name
is decoded here (pog/lazyhop.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.pog.fastsets import _hash_sets, _member, _rows, canon, unique_sorted
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
    n, k2 = g.n, 2 * max(len(g.rel_names), 1)
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
        back = np.unique(
            np.array(
                [d * k2 + (c ^ 1) for d, x in enumerate(dg.tolist()) for c in glist[x]],
                dtype=np.int64,
            )
        )
        own, key, u = _rows(
            g, pool[ranges(start[dk], lens[dk])], np.repeat(np.arange(len(dk)), lens[dk])
        )
        ok = _member(back, own * k2 + key)
        near = unique_sorted(own[ok] * n + u[ok])  # d * n + node: reachable back from kept set d
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
