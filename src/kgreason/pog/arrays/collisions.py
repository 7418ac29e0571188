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


def _rows(g: ArrayClusteredGraph, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner index into nodes, key code) of every edge row of the nodes, both directions."""
    owners, codes = [], []
    for ptr, rel, fwd in ((g.optr, g.orel, 1), (g.iptr, g.irel, 0)):
        count = ptr[nodes + 1] - ptr[nodes]
        owners.append(np.repeat(np.arange(len(nodes), dtype=np.int64), count))
        codes.append(rel[ranges(ptr[nodes], count)].astype(np.int64) * 2 + fwd)
    return np.concatenate(owners), np.concatenate(codes)


def _per_key(owner: np.ndarray, code: np.ndarray, n_codes: int):
    """(owner, key code, rows) of each distinct (owner, key) among these rows."""
    pair, rows = np.unique(owner * n_codes + code, return_counts=True)
    return pair // n_codes, pair % n_codes, rows


def collision_paths(g: ArrayClusteredGraph, paths: Sequence[ReasoningPath]) -> list[bool]:
    """order_free.collision_path of each path, on each hop set's edge rows (read once per
    distinct set: ranked paths share their prefixes' hops). The test is a conjunction over
    the members the next hop leaves by, so its parts are computed cheapest first and only
    while it can still hold: the rows leaving, then the entering degree, and only then the
    per-key degree table (a sort of every row), once per (set, entering keys)."""
    from kgreason.pog.order_free import COLLECTOR_DEGREE, COLLISION_OTHER_DEGREE, MERGED_KEYS

    rel_ids = g.rel_index
    n_codes = 2 * max(len(g.rel_names), 1)
    tables: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}
    memo: dict[tuple[str, int, tuple[Key, ...]], np.ndarray] = {}
    by_code: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def rows_of(owner: np.ndarray, code: np.ndarray, codes: list[Code]) -> np.ndarray:
        """The positions of the rows with one of these key codes, from the rows sorted by
        code once per set (a radix sort for narrow codes), so each test reads only its
        keys' rows."""
        got = by_code.get(id(owner))
        if got is None:
            narrow = code.astype(np.int16 if n_codes < 2**15 else np.int32)
            order = np.argsort(narrow, kind="stable")
            got = by_code[id(owner)] = (order, np.searchsorted(code[order], np.arange(n_codes + 1)))
        order, start = got
        cs = np.array(sorted(set(codes)), dtype=np.int64)
        return order[ranges(start[cs], start[cs + 1] - start[cs])]

    def table(h: Hop) -> tuple[np.ndarray, np.ndarray, int]:
        key = id(h.side(True))
        got = tables.get(key)
        if got is None:
            nodes = _ids(g, h)
            got = tables[key] = (*_rows(g, nodes), len(nodes))
        return got

    def cached(kind: str, h: Hop, keys: tuple[Key, ...], make) -> np.ndarray:
        at = (kind, id(h.side(True)), keys)
        got = memo.get(at)
        if got is None:
            got = memo[at] = make(*table(h), keys)
        return got

    def leave_rows(owner, code, n, keys):
        return np.bincount(owner[rows_of(owner, code, _codes(rel_ids, keys))], minlength=n)

    def collector(owner, code, n, keys):
        """Members entered by one of these keys at least COLLECTOR_DEGREE times."""
        at = rows_of(owner, code, _codes(rel_ids, keys))
        o, _, rows = _per_key(owner[at], code[at], n_codes)
        enter_max = np.zeros(n, dtype=np.int64)
        np.maximum.at(enter_max, o, rows)
        return enter_max >= COLLECTOR_DEGREE

    def many_small_keys(owner, code, n, keys):
        """Members with MERGED_KEYS other relations' keys of few rows each."""
        enter_ids = np.array([rel_ids[r] for r, _ in keys if r in rel_ids], dtype=np.int64)
        other = ~np.isin(code // 2, enter_ids)
        o, _, rows = _per_key(owner[other], code[other], n_codes)
        few = rows <= COLLISION_OTHER_DEGREE
        return np.bincount(o[few], minlength=n) >= MERGED_KEYS

    def collides(path: ReasoningPath) -> bool:
        for j in range(len(path.hops) - 1):
            h, nxt = path.hops[j], path.hops[j + 1]
            enter_keys = tuple((r, not f) for r, f in h.relation_keys())
            leave_keys = tuple(nxt.relation_keys())
            if {r for r, _ in leave_keys} & {r for r, _ in enter_keys}:
                continue
            if not table(h)[2]:
                continue
            rows_out = cached("leave", h, leave_keys, leave_rows)
            going = rows_out > 0
            if not going.any() or (rows_out[going] > COLLISION_OTHER_DEGREE).any():
                continue
            if not cached("collector", h, enter_keys, collector)[going].all():
                continue
            if cached("small", h, enter_keys, many_small_keys)[going].all():
                return True
        return False

    return [collides(p) for p in paths]
