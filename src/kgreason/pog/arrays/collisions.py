"""order_free.collision_paths on the array graph: the same test, on degree tables.

Why: the reference reads every member of every hop's end set through `graph.adj` (a name
decoded and a dict built per member): a 27,000-member hub set at 10M triples took 1.4-2.9 s
of a question (the LLM-free mode's `rank` step), against milliseconds here. Here each
hop's end set is one array of local ids, and the degree of every (member, key) is counted
from the CSR rows of those members at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.clustering import Key
from kgreason.pog.types import Hop, ReasoningPath

#: a Key's code here: relation id * 2 + forward
Code = int


def _codes(rel_ids: dict[str, int], keys: Sequence[Key]) -> list[Code]:
    return [rel_ids[r] * 2 + f for r, f in keys if r in rel_ids]


def _ids(g: ArrayClusteredGraph, h: Hop) -> np.ndarray:
    side = h.side(True)
    got = getattr(side, "ids", None)  # a NameSet: its ids are this graph's when its names are
    if got is not None and getattr(side, "_names", None) is g.names:
        return np.asarray(got, dtype=np.int64)
    u = g.index.many(list(h.dst))
    return u[u >= 0]


def _degrees(
    g: ArrayClusteredGraph, nodes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(owner index into nodes, key code, rows) of every (node, key) the nodes have."""
    owners, codes = [], []
    for ptr, rel, fwd in ((g.optr, g.orel, 1), (g.iptr, g.irel, 0)):
        count = ptr[nodes + 1] - ptr[nodes]
        owners.append(np.repeat(np.arange(len(nodes), dtype=np.int64), count))
        codes.append(rel[ranges(ptr[nodes], count)].astype(np.int64) * 2 + fwd)
    n_codes = 2 * max(len(g.rel_names), 1)
    pair = np.concatenate(owners) * n_codes + np.concatenate(codes)
    pair, rows = np.unique(pair, return_counts=True)
    return pair // n_codes, pair % n_codes, rows


def collision_paths(g: ArrayClusteredGraph, paths: Sequence[ReasoningPath]) -> list[bool]:
    """order_free.collision_path of each path; each distinct hop set's degree table is
    counted once (ranked paths share their prefixes' hops)."""
    from kgreason.pog.order_free import COLLECTOR_DEGREE, COLLISION_OTHER_DEGREE, MERGED_KEYS

    rel_ids = {name: i for i, name in enumerate(g.rel_names)}
    tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, int]] = {}

    def table(h: Hop) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        key = id(h.side(True))
        got = tables.get(key)
        if got is None:
            nodes = _ids(g, h)
            got = tables[key] = (*_degrees(g, nodes), len(nodes))
        return got

    def collides(path: ReasoningPath) -> bool:
        for j in range(len(path.hops) - 1):
            h, nxt = path.hops[j], path.hops[j + 1]
            enter_keys = [(r, not f) for r, f in h.relation_keys()]
            enter_rels = {r for r, _ in enter_keys}
            leave_keys = nxt.relation_keys()
            if {r for r, _ in leave_keys} & enter_rels:
                continue
            owner, code, rows, n = table(h)
            if not n:
                continue
            leave_rows = np.bincount(owner, rows * np.isin(code, _codes(rel_ids, leave_keys)), n)
            going = leave_rows > 0
            if not going.any():
                continue
            enter_max = np.zeros(n, dtype=np.int64)
            at = np.isin(code, _codes(rel_ids, enter_keys))
            np.maximum.at(enter_max, owner[at], rows[at])
            enter_ids = np.array([rel_ids[r] for r in enter_rels if r in rel_ids], dtype=np.int64)
            few = ~np.isin(code // 2, enter_ids) & (rows <= COLLISION_OTHER_DEGREE)
            merged = (
                (enter_max >= COLLECTOR_DEGREE)
                & (leave_rows <= COLLISION_OTHER_DEGREE)
                & (np.bincount(owner[few], minlength=n) >= MERGED_KEYS)
            )
            if merged[going].all():
                return True
        return False

    return [collides(p) for p in paths]
