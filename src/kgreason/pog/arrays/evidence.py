"""evidence.shown_paths on the array graph: chains counted and triples picked on ids.

Why: the reference reads every member of every set through `graph.adj` and makes a Triple
per edge: a hub question's top paths (sets of 17,000-31,000 members, hops of up to 99,000
triples at 10M) took 1.7-2.6 s to materialise and 2.2-2.7 s more to check their triples,
to show 50 members and 100 triples a hop. Here each hop's edges between its two sets are
one gather over the CSR rows of the src members; chain counts are bincounts over them; only
the members and triples shown are decoded.

Same result as the reference (tests/pog/test_evidence.py): local ids follow the nodes'
key order, so (-support, id) orders like (-support, name), and a triple's (head, relation,
tail) order is (head id, relation rank, tail id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from kgreason.kg.base import Triple
from kgreason.kg.store.build_index import ranges
from kgreason.pog.arrays.graph import ArrayClusteredGraph
from kgreason.pog.arrays.names import NodeNames
from kgreason.pog.evidence import Shown
from kgreason.pog.types import Hop, ReasoningPath


@dataclass
class _Edges:
    """A hop's edges between its src and dst sets: src id, dst id, relation id, forward."""

    s: np.ndarray
    d: np.ndarray
    rel: np.ndarray
    fwd: np.ndarray


class RankedIds(Sequence[str]):
    """A whole set in relevance order, kept as ids: indexing or slicing decodes only the
    members asked for (a page), so keeping a 30,000-member set for paging costs its ids."""

    def __init__(self, ids: np.ndarray, names: NodeNames):
        self._ids, self._names = ids, names

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...
    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        if isinstance(i, slice):
            ids = self._ids[i]
            return tuple(self._names[ids].tolist()) if len(ids) else ()
        return str(self._names[int(self._ids[i])])


def _ids(g: ArrayClusteredGraph, h: Hop, dst: bool) -> np.ndarray:
    side = h.side(dst)
    got = getattr(side, "ids", None)
    if got is not None and getattr(side, "_names", None) is g.names:
        return np.asarray(got, dtype=np.int64)
    u = g.index.many(list(side))
    return np.sort(u[u >= 0])


def _edges(g: ArrayClusteredGraph, h: Hop, src: np.ndarray, dst: np.ndarray) -> _Edges:
    """The hop's edges from the (sorted) src members to the (sorted) dst members, relation
    key by key, each key's in src order: a membership test by binary search on the rows of
    the key's relation (no array over the whole graph: a candidate search reads this for
    dozens of paths of a question). A triple both keys of its relation read (a self-loop,
    or both ends in both sets) is the earlier key's only, as the reference's."""
    rel_ids = g.rel_index
    parts = []
    keys = h.relation_keys()
    for j, (rel, fwd) in enumerate(keys):
        rid = rel_ids.get(rel)
        if rid is None:
            continue
        ptr, rels, nbrs = (g.optr, g.orel, g.odst) if fwd else (g.iptr, g.irel, g.isrc)
        count = ptr[src + 1] - ptr[src]
        pos = ranges(ptr[src], count)
        owner = np.repeat(src, count)
        on_rel = np.flatnonzero(rels[pos] == rid)
        nb = nbrs[pos[on_rel]].astype(np.int64)
        keep = on_rel[_within(dst, nb)]
        s, d = owner[keep], nbrs[pos[keep]].astype(np.int64)
        if (rel, not fwd) in keys[:j]:  # read the other way round already: (d, s) there
            again = _within(src, d) & _within(dst, s)
            s, d = s[~again], d[~again]
        parts.append((s, d, np.full(len(s), rid, np.int64), np.full(len(s), fwd, bool)))
    if not parts:
        e = np.zeros(0, dtype=np.int64)
        return _Edges(e, e, e, np.zeros(0, dtype=bool))
    return _Edges(*(np.concatenate(x) for x in zip(*parts, strict=True)))


def _within(ids: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Whether each of x is among the sorted `ids`."""
    if not len(ids):
        return np.zeros(len(x), dtype=bool)
    at = np.minimum(np.searchsorted(ids, x), len(ids) - 1)
    return ids[at] == x


def _push(s: np.ndarray, d: np.ndarray, w: np.ndarray, n_to: int) -> np.ndarray:
    """Chains reaching each of n_to positions through the distinct position pairs (s, d):
    the sum of w[s]. Pairs in (s, d) order, as the global ids order them, so the float sums
    are added in the same order whatever the numbering."""
    pairs = np.unique(s * max(n_to, 1) + d)
    ps, pd = np.divmod(pairs, max(n_to, 1))
    return np.bincount(pd, weights=w[ps], minlength=n_to)


def _support(
    g: ArrayClusteredGraph, path: ReasoningPath, sets: list[np.ndarray], edges: list[_Edges]
) -> list[np.ndarray]:
    """order_free.member_support on ids: per hop, chains through each member of its dst
    set (aligned with sets[j + 1])."""
    at_s = [np.searchsorted(sets[j], e.s) for j, e in enumerate(edges)]
    at_d = [np.searchsorted(sets[j + 1], e.d) for j, e in enumerate(edges)]
    fwd = [np.ones(len(sets[0]))]
    for j in range(len(edges)):
        fwd.append(_push(at_s[j], at_d[j], fwd[-1], len(sets[j + 1])))
    if len(path.entity_list) <= 1:
        return fwd[1:]
    bwd = [np.ones(len(sets[-1]))]
    for j in reversed(range(len(edges))):
        bwd.append(_push(at_d[j], at_s[j], bwd[-1], len(sets[j])))
    bwd.reverse()
    return [fwd[j] * bwd[j] for j in range(1, len(fwd))]


def _ordered(ids: np.ndarray, support: np.ndarray | None) -> np.ndarray:
    """The members by chains through them (support aligned with ids), then by id."""
    if support is None:
        return ids
    return ids[np.lexsort((ids, -support))]


def _names(g: ArrayClusteredGraph, ids: np.ndarray) -> tuple[str, ...]:
    return tuple(g.names[ids].tolist()) if len(ids) else ()


def _shown(
    g: ArrayClusteredGraph, path: ReasoningPath, max_members: int | None, max_triples: int | None
) -> tuple[ReasoningPath, list[Sequence[str]]]:
    hops = path.hops
    sets = [_ids(g, hops[0], False), *(_ids(g, h, True) for h in hops)]
    edges = [_edges(g, h, sets[j], sets[j + 1]) for j, h in enumerate(hops)]
    support = _support(g, path, sets, edges)
    order = [
        _ordered(sets[0], None),
        *(_ordered(sets[j + 1], support[j]) for j in range(len(hops))),
    ]
    rank = np.full(g.n, -1, dtype=np.int64)
    rel_rank = g.rel_rank
    out = []
    for j, h in enumerate(hops):
        src, dst, e = order[j], order[j + 1], edges[j]
        rank[src] = np.arange(len(src))
        rank_s = rank[e.s]
        rank[dst] = np.arange(len(dst))
        rank_d = rank[e.d]
        head = np.where(e.fwd, e.s, e.d)
        tail = np.where(e.fwd, e.d, e.s)
        pick = np.lexsort((tail, rel_rank[e.rel], head, rank_s, rank_d))
        if max_triples is not None:
            pick = pick[:max_triples]
        hn, tn = g.names[head[pick]].tolist(), g.names[tail[pick]].tolist()
        rels = [g.rel_names[r] for r in e.rel[pick].tolist()]
        triples = tuple(Triple(a, r, b) for a, r, b in zip(hn, rels, tn, strict=True))
        shown_src = src if max_members is None else src[:max_members]
        shown_dst = dst if max_members is None else dst[:max_members]
        out.append(
            Hop(
                _names(g, shown_src),
                h.relation,
                _names(g, shown_dst),
                h.forward,
                triples,
                h.alt_relations,
                len(src) if len(shown_src) < len(src) else None,
                len(dst) if len(shown_dst) < len(dst) else None,
                len(e.s) if len(triples) < len(e.s) else None,
            )
        )
    whole: list[Sequence[str]] = [RankedIds(o, g.names) for o in order]
    return ReasoningPath(tuple(out), path.entity_list), whole


def ranked_sets(
    g: ArrayClusteredGraph, path: ReasoningPath, first: int | None
) -> list[Sequence[str]]:
    """order_free.ranked_sets on ids: only the members returned are decoded."""
    hops = path.hops
    sets = [_ids(g, hops[0], False), *(_ids(g, h, True) for h in hops)]
    edges = [_edges(g, h, sets[j], sets[j + 1]) for j, h in enumerate(hops)]
    support = _support(g, path, sets, edges)
    out: list[Sequence[str]] = []
    for j in range(len(hops)):
        ranked = _ordered(sets[j + 1], support[j])
        out.append(_names(g, ranked if first is None else ranked[:first]))
    return out


def shown_paths(
    g: ArrayClusteredGraph,
    paths: Sequence[ReasoningPath],
    max_members: int | None,
    max_triples: int | None,
) -> Shown:
    got = [_shown(g, p, max_members, max_triples) if p.hops else (p, []) for p in paths]
    return Shown([p for p, _ in got], [s for _, s in got])
