"""A level of partial paths (`_Level`), node hashes, and the per-partial-path expansion of
small levels (`_RowSteps`), for search.py's searches.

Why apart: search.py holds the two searches (free and segment); these are the level data
and the expansion it uses below SMALL_LEVEL_ROWS (MetaQA), where LevelSteps' distinct-set
bookkeeping costs more than it saves.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kgreason.pog.arrays.set_ids import unique_sorted
from kgreason.pog.arrays.steps import _member, _rows, _Steps

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import ArrayClusteredGraph

#: rows (partial path, edge) gathered per chunk of a level by _RowSteps
CHUNK_ROWS = 1 << 21


@dataclass
class _Level:
    """The partial paths of one length, side by side (index p)."""

    parent: np.ndarray  # index of each partial path's prefix in the previous level
    groups: Sequence[tuple[int, ...]]  # key codes of the hop that made it (primary first)
    lens: np.ndarray  # size of each set; the sets lie in `nodes` in order
    nodes: np.ndarray
    h: np.ndarray | None = None  # each set's hash (sum of _node_hash), when carried over
    _codes: np.ndarray | None = None
    _off: np.ndarray | None = None

    def codes(self, n: int) -> np.ndarray:
        """p * n + node for every member, sorted (the sets are sorted and in p order)."""
        if self._codes is None:
            own = np.repeat(np.arange(len(self.lens), dtype=np.int64), self.lens)
            self._codes = own * n + self.nodes
        return self._codes

    def offsets(self) -> np.ndarray:
        if self._off is None:
            self._off = np.zeros(len(self.lens) + 1, dtype=np.int64)
            np.cumsum(self.lens, out=self._off[1:])
        return self._off

    def contains(self, p: np.ndarray, u: np.ndarray, n: int) -> np.ndarray:
        return _member(self.codes(n), p * n + u)


@functools.cache
def _hash_table(bits: int) -> np.ndarray:
    """2**bits random 64-bit node hashes (made once per process and size class: drawing
    them per question cost ~1.5 ms at 10M). Graphs share it: never written (not flagged
    read-only, which the compiled kernels' signatures do not take)."""
    return np.random.default_rng(0x5EED).integers(0, 2**63, 1 << bits, dtype=np.uint64)


def _node_hash(g: ArrayClusteredGraph) -> np.ndarray:
    """A random 64-bit hash per local node id (set hashes are sums of them; no result
    depends on the values, equal hashes are verified exactly)."""
    got = getattr(g, "_node_hash", None)
    if got is None:
        got = _hash_table(max(int(g.n - 1).bit_length(), 10))[: g.n]
        g._node_hash = got  # type: ignore[attr-defined]
    return got


def _steps(
    g: ArrayClusteredGraph,
    lv: _Level,
    prev: _Level | None,
    p0: int,
    p1: int,
    keep: np.ndarray,
    hv: np.ndarray,
    revisit: bool = False,
) -> _Steps:
    """paths.py's `_steps` for partial paths p0..p1-1 of `lv` at once (`hv`: node hashes;
    `revisit`: a (partial path, key) whose rows the filters drop all keeps them all)."""
    n, k2 = g.n, 2 * max(len(g.rel_names), 1)
    off = lv.offsets()
    members = lv.nodes[off[p0] : off[p1]]
    owner = np.repeat(np.arange(p0, p1, dtype=np.int64), lv.lens[p0:p1])
    own, key, nb = _rows(g, members, owner)
    ok = keep[nb]
    if prev is not None:  # no immediate backtracking into the previous set
        back = np.unique(
            np.array(
                [p * k2 + (c ^ 1) for p in range(p0, p1) for c in lv.groups[p]], dtype=np.int64
            )
        )
        rows = np.flatnonzero(ok & _member(np.unique(back % k2), key))
        rows = rows[_member(back, own[rows] * k2 + key[rows])]
        if len(rows):
            ok[rows[prev.contains(lv.parent[own[rows]], nb[rows], n)]] = False
    if revisit:
        step = own * k2 + key
        ok |= ~_member(unique_sorted(step[ok]), step)
    codes = unique_sorted((own[ok] * k2 + key[ok]) * n + nb[ok])
    prefix, nodes = np.divmod(codes, n)
    cut = np.flatnonzero(prefix[1:] != prefix[:-1]) + 1
    a = np.concatenate([[0], cut]).astype(np.int64) if len(codes) else cut
    b = np.concatenate([cut, [len(codes)]]).astype(np.int64) if len(codes) else cut
    sp, skey = np.divmod(prefix[a], k2)
    h = np.add.reduceat(hv[nodes], a) if len(a) else a.astype(np.uint64)
    order = np.lexsort((skey, b - a, h, sp))
    sp, skey, h, a, b = sp[order], skey[order], h[order], a[order], b[order]
    same = (sp[1:] == sp[:-1]) & (h[1:] == h[:-1]) & ((b - a)[1:] == (b - a)[:-1])
    primary = np.ones(len(sp), dtype=bool)
    alts: dict[int, list[int]] = {}
    if same.any():  # steps sharing a hash: group them by their exact sets
        run = np.concatenate([[0], np.cumsum(~same)])
        first = np.flatnonzero(np.diff(run, prepend=-1))
        size = np.diff(np.append(first, len(run)))
        for r0, sz in zip(first[size > 1].tolist(), size[size > 1].tolist(), strict=True):
            seen: dict[bytes, int] = {}
            for c in range(r0, r0 + sz):  # in key order: the first is the primary
                c0 = seen.setdefault(nodes[a[c] : b[c]].tobytes(), c)
                if c0 != c:
                    primary[c] = False
                    alts.setdefault(c0, []).append(int(skey[c]))
    keep_idx = np.flatnonzero(primary)
    order = keep_idx[np.lexsort((skey[keep_idx], sp[keep_idx]))]
    where = {int(x): i for i, x in enumerate(order.tolist())} if alts else {}
    st = _Steps(
        codes,
        sp[order],
        skey[order],
        a[order],
        b[order],
        nodes,
        {where[c]: tuple(ks) for c, ks in alts.items()},
    )
    st.h = h[order]
    return st


def _chunks(g: ArrayClusteredGraph, lv: _Level) -> list[tuple[int, int]]:
    """Consecutive ranges of partial paths with about CHUNK_ROWS edge rows each."""
    deg = (g.degree[lv.nodes]).astype(np.int64)
    per = np.add.reduceat(deg, lv.offsets()[:-1]) if len(deg) else np.zeros(len(lv.lens))
    per[lv.lens == 0] = 0
    cum = np.cumsum(per)
    out, p0 = [], 0
    while p0 < len(lv.lens):
        base = cum[p0 - 1] if p0 else 0
        p1 = int(np.searchsorted(cum, base + CHUNK_ROWS, side="right"))
        p1 = max(p1, p0 + 1)
        out.append((p0, p1))
        p0 = p1
    return out


class _RowSteps:
    """The per-partial-path expansion (every edge row of every partial path): cheaper than
    LevelSteps' distinct-set bookkeeping on small levels (MetaQA), same steps."""

    def __init__(self, g: ArrayClusteredGraph, lv: _Level, prev: _Level | None, keep, hv, t=-1):
        self.g, self.lv, self.prev, self.keep, self.hv, self.t = g, lv, prev, keep, hv, t
        self.revisit = -1  # as LevelSteps.revisit

    def chunks(self) -> list[tuple[int, int]]:
        return _chunks(self.g, self.lv)

    def steps(self, p0: int, p1: int) -> _Steps:
        g = self.g
        st = _steps(g, self.lv, self.prev, p0, p1, self.keep, self.hv, self.revisit >= 0)
        if self.t >= 0:
            k2 = 2 * max(len(g.rel_names), 1)
            st.has_t = _member(st.codes, (st.p * k2 + st.key) * g.n + self.t)
        return st
