"""Making LazyHops and paths of them in bulk: the segment and free searches (search.py,
table.py, orient.py, restrict.py) make thousands of hops and paths per question, and a
constructor call per object cost 2-4x the time, so objects are made with `object.__new__`
and their slots set by C-level maps of the slots' own setters.

API:
    HopMaker(graph).hop(src_set, codes, dst_set) -> LazyHop
    HopMaker(graph).groups(steps, idx) / .sets(nodes, a, b) / HopMaker.hops(srcs, keys,
        dsts, codes): the hops of a whole chunk of steps at once (pog/arrays/search.py)
    make_paths(chains, ents) -> [ReasoningPath]; sort_by_codes(chains) -> chains in
        path_signature order
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from kgreason.pog.arrays.hops import LazyHop, NameSet
from kgreason.pog.types import Hop, ReasoningPath

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import ArrayClusteredGraph
    from kgreason.pog.arrays.steps import _Steps
    from kgreason.pog.clustering import Key


class HopMaker:
    """LazyHops of one ArrayClusteredGraph: key codes resolved once per distinct group.

    The bulk methods (`groups`, `sets`, `hops`) build the hops of a whole chunk of steps
    (pog/arrays/search.py) with no Python call per step: keys come from per-code arrays, equal
    sets share one NameSet, and objects are made by setting their slots directly (the
    classes' own constructors run per object: 2-3x the cost, measured)."""

    def __init__(self, g: ArrayClusteredGraph):
        self.g, self.names = g, g.names
        self._keys: dict[tuple[int, ...], tuple[Key, ...]] = {}
        # code -> ((relation, forward),), code -> (code,), codes not resolved yet: kept on
        # the graph, which is searched once per topic order
        got: tuple[np.ndarray, np.ndarray, np.ndarray] | None = getattr(g, "_hop_keys", None)
        if got is None:
            k2 = 2 * max(len(g.rel_names), 1)
            got = (np.empty(k2, dtype=object), np.empty(k2, dtype=object), np.ones(k2, dtype=bool))
            g._hop_keys = got  # type: ignore[attr-defined]
        self._k1, self._g1, self._todo = got

    def set(self, ids: np.ndarray) -> NameSet:
        return NameSet(ids, self.names)

    def keys(self, codes: tuple[int, ...]) -> tuple[Key, ...]:
        if len(codes) == 1 and not self._todo[codes[0]]:  # resolved on the graph already
            return self._k1[codes[0]]  # type: ignore[no-any-return]
        keys = self._keys.get(codes)
        if keys is None:
            keys = self._keys[codes] = tuple(self.g.key_of(c) for c in codes)
        return keys

    def hop(self, src: NameSet, codes: tuple[int, ...], dst: NameSet) -> LazyHop:
        return LazyHop.make(src, self.keys(codes), dst, codes[0])

    def groups(
        self, st: _Steps, idx: np.ndarray
    ) -> tuple[list[tuple[Key, ...]], list[tuple[int, ...]]]:
        """(relation keys, key codes) of steps `idx` (sorted) of `st`: the codes are what
        st.codes_of gives, resolved per distinct code instead of per step."""
        key = st.key[idx]
        k1, g1 = self._k1, self._g1
        for c in set(key[self._todo[key]].tolist()):  # codes not resolved yet
            g1[c] = (c,)
            k1[c] = (self.g.key_of(c),)
            self._todo[c] = False
        keys, groups = k1[key].tolist(), g1[key].tolist()
        if st.alts:
            at = np.searchsorted(idx, np.fromiter(st.alts, dtype=np.int64, count=len(st.alts)))
            for i, j in zip(st.alts, at.tolist(), strict=True):
                if j < len(idx) and idx[j] == i:
                    codes = groups[j] = (*groups[j], *st.alts[i])
                    keys[j] = self.keys(codes)
        return keys, groups

    def sets(self, nodes: np.ndarray, a: np.ndarray, b: np.ndarray) -> list[NameSet]:
        """NameSet(nodes[a[i]:b[i]]) for each i; equal ranges share one NameSet."""
        if not len(a):
            return []
        span = a * (int(b.max()) + 1) + b
        u, first, inv = np.unique(span, return_index=True, return_inverse=True)
        n = len(u)
        made = list(map(object.__new__, repeat(NameSet, n)))
        _run(
            map(
                _set_ids,
                made,
                map(nodes.__getitem__, map(slice, a[first].tolist(), b[first].tolist())),
            )
        )
        _run(map(_set_names, made, repeat(self.names, n)))
        _run(map(_set_all, made, repeat(None, n)))
        _run(map(_set_head, made, repeat((), n)))
        _run(map(_set_key, made, repeat(None, n)))
        return np.fromiter(made, dtype=object, count=n)[inv.reshape(-1)].tolist()  # type: ignore[no-any-return]

    @staticmethod
    def hops(
        srcs: Sequence[NameSet],
        keys: Sequence[tuple[Key, ...]],
        dsts: Sequence[NameSet],
        codes: Sequence[int],
    ) -> list[LazyHop]:
        """LazyHop.make for each (src, keys, dst, primary code): the objects made, then each
        slot set for all of them by a C-level map of its setter."""
        n = len(srcs)
        if not len(keys) == len(dsts) == len(codes) == n:
            raise ValueError("hops: srcs, keys, dsts and codes differ in length")
        out = list(map(object.__new__, repeat(LazyHop, n)))
        _run(map(_set_src, out, srcs))
        _run(map(_set_dst, out, dsts))
        _run(map(_set_keys, out, keys))
        _run(map(_set_code, out, codes))
        return out


def _run(it: Iterable[Any]) -> None:
    """Consume an iterator (a map run for its effect) at C speed."""
    deque(it, maxlen=0)


# the slots' own setters: make objects without a constructor call (HopMaker's bulk methods)
_set_ids, _set_names, _set_all, _set_head, _set_key = (
    vars(NameSet)[x].__set__ for x in ("ids", "_names", "_all", "_head", "_key")
)
_set_src, _set_dst, _set_keys, _set_code = (
    vars(LazyHop)[x].__set__ for x in ("_src", "_dst", "_keys", "code")
)
_set_path_hops, _set_path_ents = (vars(ReasoningPath)[x].__set__ for x in ("hops", "entity_list"))


def make_paths(chains: Sequence[tuple[Hop, ...]], ents: tuple[str, ...]) -> list[ReasoningPath]:
    """ReasoningPath(c, ents) for each chain, without the frozen dataclass's __init__: the
    objects are made, then each field is set for all of them by a C-level map of its slot's
    setter (what that __init__ does per field, via object.__setattr__): the same objects,
    ~4x faster."""
    out = list(map(object.__new__, repeat(ReasoningPath, len(chains))))
    _run(map(_set_path_hops, out, chains))
    _run(map(_set_path_ents, out, repeat(ents, len(chains))))
    return out


def sort_by_codes(chains: list[tuple[Hop, ...]]) -> list[tuple[Hop, ...]]:
    """chains sorted (stably) by (len(c), [h.code ^ 1 for h in c]) for LazyHop chains:
    one lexsort per length instead of a Python key per chain."""
    if len(chains) < 2:
        return list(chains)
    lens = np.fromiter(map(len, chains), dtype=np.int64, count=len(chains))
    codes = np.fromiter((h.code for c in chains for h in c), dtype=np.int64, count=int(lens.sum()))  # type: ignore[attr-defined]
    off = np.zeros(len(chains) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    out: list[tuple[Hop, ...]] = []
    for length in np.unique(lens).tolist():
        rows = np.flatnonzero(lens == length)
        if length:
            c = codes[off[rows][:, None] + np.arange(length)[None, :]] ^ 1
            rows = rows[np.lexsort(c.T[::-1])]
        out += [chains[i] for i in rows.tolist()]
    return out
