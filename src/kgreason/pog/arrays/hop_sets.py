"""Reading the sets of a path's hops without decoding every name (LazyHops, pog/arrays/hops.py,
and plain Hops alike): which sets a rendering shows, their first members decoded in one
store decode, a set's size and identity, and a path's answer-set size counted on ids.

Why: a 10M hub question's search returns 20,000 paths whose sets hold up to thousands of
entities; rendering shows 4 members a set, and the ranker's features need only sizes.

API:
    shown_sets(paths) -> (NameSets, tuples);  prefetch(sets, k);  prefetch_heads(paths, k)
    set_view(hop, dst, k) -> (members shown, set size)
    set_obj(hop, dst) -> the set's object (its identity names the set; len() is its size)
    answer_count(hops, topics, end_only) -> answer set size, no name decoded
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from kgreason.pog.arrays.hops import LazyHop, NameSet
from kgreason.pog.types import Hop, ReasoningPath


def shown_sets(paths: Iterable[ReasoningPath]) -> tuple[list[NameSet], list[tuple[str, ...]]]:
    """The distinct sets a rendering of `paths` shows (each path's first src, every dst):
    (the LazyHops' NameSets, the plain Hops' tuples)."""
    lazy: dict[int, NameSet] = {}
    plain: dict[int, tuple[str, ...]] = {}
    for p in paths:
        for j, h in enumerate(p.hops):
            if isinstance(h, LazyHop):
                if j == 0:
                    lazy.setdefault(id(h._src), h._src)
                lazy.setdefault(id(h._dst), h._dst)
            else:
                if j == 0:
                    plain.setdefault(id(h.src), h.src)
                plain.setdefault(id(h.dst), h.dst)
    return list(lazy.values()), list(plain.values())


def prefetch(sets: Sequence[NameSet], k: int | None) -> None:
    """Decode the first k members of each of `sets`, in one decode per names table."""
    if k is None:
        return
    todo = [s for s in sets if s._all is None and len(s._head) < min(k, len(s))]
    by_table: dict[int, list[NameSet]] = {}
    for s in todo:
        by_table.setdefault(id(s._names), []).append(s)
    for group in by_table.values():
        heads = [s.ids[:k] for s in group]
        flat = group[0]._names[np.concatenate(heads)].tolist()
        at = 0
        for s, h in zip(group, heads, strict=True):
            s._head = tuple(flat[at : at + len(h)])
            at += len(h)


def prefetch_heads(paths: Iterable[ReasoningPath], k: int | None) -> None:
    """prefetch() for every lazy set a rendering of `paths` shows."""
    if k is not None:
        prefetch(shown_sets(paths)[0], k)


def set_view(h: Hop, dst: bool, k: int | None) -> tuple[Sequence[str], int]:
    """(the first k members of h.dst or h.src, or all when k is None; the set's size)."""
    if isinstance(h, LazyHop):
        s = h._dst if dst else h._src
        return s.head(k), len(s)
    ids = h.dst if dst else h.src
    return ids[:k], len(ids)


def answer_count(hops: Sequence[Hop], topics: Sequence[str], end_only: bool) -> int | None:
    """len(ranker.supervision.answer_set) of a path whose hops are LazyHops of one graph,
    without decoding a name (the end set, or every dst set when not `end_only`, less the
    topics); None for other hops."""
    if not hops or not all(isinstance(h, LazyHop) for h in hops):
        return None
    sets = [hops[-1]._dst] if end_only else [h._dst for h in hops]  # type: ignore[attr-defined]
    index = sets[0]._names.index
    if index is None or any(x._names is not sets[0]._names for x in sets):
        return None
    ids = sets[0].ids if len(sets) == 1 else np.unique(np.concatenate([x.ids for x in sets]))
    inside = 0
    for u in index.many(list(dict.fromkeys(topics))).tolist():  # (a few topics: sorted ids)
        at = int(np.searchsorted(ids, u))
        inside += u >= 0 and at < len(ids) and int(ids[at]) == u
    return len(ids) - inside


def set_obj(h: Hop, dst: bool) -> NameSet | tuple[str, ...]:
    """The object holding h.dst (or h.src): its identity names the set while it lives, and
    its len() is the set's size (a LazyHop's names are not decoded)."""
    if isinstance(h, LazyHop):
        return h._dst if dst else h._src
    return h.dst if dst else h.src
