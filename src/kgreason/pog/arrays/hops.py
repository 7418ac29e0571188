"""Hops whose entity names are decoded when something reads them.

Why: path search on a local store (pog/arrays/search.py) returns up to `max_paths` paths of
sets of up to thousands of entities, and decoding every member's key from the store took
most of the paths stage (0.75 s of 1.4 s on three 1M questions). Downstream, LLM-free mode
reads only the first few members of each set (fuzzy ranking renders 4 per set) and the full
sets of the few top paths. So a hop from the array search keeps its sets as arrays of local
ids (`NameSet`) and decodes:
- the full set on the first read of `src`/`dst` (a `Hop` field, as before);
- only the first k members for `NameSet.head(k)` (render.py, `displayed_ids`), in one store
  decode for all sets of all paths (`LazyHop.prefetch`).

Orders without names: local ids are numbered in the store's key order (`keys.rank`, Python's
code-point order), so a sorted id array IS the sorted name tuple, comparing id tuples orders
exactly like comparing name tuples, and `NameSet.key()` (ids as big-endian bytes) compares
like them too; a key code rank*2 + forward orders like (relation, forward).
`id_signature` is therefore ordered and equal exactly like paths.path_signature.

`LazyHop` is a `Hop` (isinstance, fields, `==` and `hash` by value against any Hop, asdict);
`dataclasses.replace`, copy and pickle give a plain Hop with the names decoded.

API:
    NameSet(ids, names); len(s); s.names(); s.head(k); s.key()
    id_signature(path) -> hashable, ordered like path_signature
The hops are made by pog/arrays/hop_maker.py (`HopMaker`), a whole chunk of steps at once.
Reading a hop's sets without decoding them is `Hop`'s interface (pog/types.py: `side`,
`view`, `prefetch`, `count_answers`), which `LazyHop` implements on ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kgreason.kg.base import Triple
from kgreason.pog.types import Hop, ReasoningPath

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import NodeNames
    from kgreason.pog.clustering import Key


class NameSet:
    """A set of entities as sorted local ids of one graph; names decoded on first read."""

    __slots__ = ("_all", "_head", "_key", "_names", "ids")

    def __init__(self, ids: np.ndarray, names: NodeNames):
        self.ids, self._names = ids, names
        self._all: tuple[str, ...] | None = None
        self._head: tuple[str, ...] = ()  # the first members decoded so far
        self._key: bytes | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def names(self) -> tuple[str, ...]:
        """Every member's key, sorted (ids follow key order)."""
        if self._all is None:
            if len(self._head) == len(self.ids):  # a small set prefetch_heads decoded
                self._all = self._head
            else:
                self._all = tuple(self._names[self.ids].tolist())
        return self._all

    def head(self, k: int | None) -> tuple[str, ...]:
        """The first k members (all when k is None), decoding only those."""
        if self._all is not None:
            return self._all[:k]
        n = len(self.ids)
        if k is None or k >= n:
            return self.names()
        if len(self._head) < k:
            self._head = tuple(self._names[self.ids[:k]].tolist())
        return self._head[:k]

    def __getitem__(self, i: int) -> str:
        return self.head(i + 1)[i] if i >= 0 else self.names()[i]

    def key(self) -> bytes:
        """Orders and compares like names() (ids are non-negative, in key order)."""
        if self._key is None:
            self._key = self.ids.astype(">i8").tobytes()
        return self._key


class LazyHop(Hop):
    """A Hop over NameSets: `src`/`dst` decoded on first read, relation keys given."""

    __slots__ = ("_dst", "_keys", "_src", "code")

    _src: NameSet
    _dst: NameSet
    _keys: tuple[Key, ...]
    #: the primary key code (rank(relation) * 2 + forward)
    code: int

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """Called with Hop's fields (dataclasses.replace does): a plain Hop."""
        return Hop(*args, **kwargs)

    @classmethod
    def make(cls, src: NameSet, keys: tuple[Key, ...], dst: NameSet, code: int) -> LazyHop:
        h = object.__new__(cls)
        object.__setattr__(h, "_src", src)
        object.__setattr__(h, "_dst", dst)
        object.__setattr__(h, "_keys", keys)
        object.__setattr__(h, "code", code)
        return h

    @property  # type: ignore[override]
    def src(self) -> tuple[str, ...]:
        return self._src.names()

    @property  # type: ignore[override]
    def dst(self) -> tuple[str, ...]:
        return self._dst.names()

    @property  # type: ignore[override]
    def relation(self) -> str:
        return self._keys[0][0]

    @property  # type: ignore[override]
    def forward(self) -> bool:
        return self._keys[0][1]

    @property  # type: ignore[override]
    def triples(self) -> tuple[Triple, ...]:
        return ()

    @property  # type: ignore[override]
    def alt_relations(self) -> tuple[Key, ...]:
        return self._keys[1:]

    @property
    def src_set(self) -> NameSet:
        return self._src

    @property
    def dst_set(self) -> NameSet:
        return self._dst

    def reversed(self) -> LazyHop:
        """Hop.reversed without decoding: sets swapped, every key's direction flipped
        (code ^ 1)."""
        keys = tuple((r, not f) for r, f in self._keys)
        return LazyHop.make(self._dst, keys, self._src, self.code ^ 1)

    def side(self, dst: bool) -> NameSet:  # type: ignore[override]
        """The NameSet (no name decoded: len() is its size)."""
        return self._dst if dst else self._src

    def view(self, dst: bool, k: int | None) -> tuple[Sequence[str], int]:
        s = self._dst if dst else self._src
        return s.head(k), len(s)

    @classmethod
    def prefetch(cls, sides: Sequence[tuple[Hop, bool]], k: int | None) -> None:
        """Decode the first k members of these hops' sets, in one decode per names table."""
        if k is None:
            return
        sets: dict[int, NameSet] = {}
        for hop, d in sides:
            got = hop.side(d)
            if isinstance(got, NameSet):  # (a plain Hop among them holds its names)
                sets.setdefault(id(got), got)
        todo = [s for s in sets.values() if s._all is None and len(s._head) < min(k, len(s))]
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

    @classmethod
    def count_answers(
        cls, hops: Sequence[Hop], topics: Sequence[str], end_only: bool
    ) -> int | None:
        """The ids less the topics, counted when every hop is a LazyHop of one graph; else
        None. (An end set of topics only counts 0: answer_size then reads those few names
        to see whether the path returned to its own topic, which answer_set answers.)"""
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

    @property  # type: ignore[override]
    def src_total(self) -> None:
        return None

    @property  # type: ignore[override]
    def dst_total(self) -> None:
        return None

    @property  # type: ignore[override]
    def triples_total(self) -> None:
        return None

    def _fields(self) -> tuple:
        """Hop's fields, in order (its dataclass hash and equality are over these)."""
        return (
            self.src,
            self.relation,
            self.dst,
            self.forward,
            (),
            self.alt_relations,
            None,
            None,
            None,
        )

    def concrete(self) -> Hop:
        return Hop(*self._fields())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyHop) and other._src._names is self._src._names:
            return (
                self._keys == other._keys
                and np.array_equal(self._src.ids, other._src.ids)
                and np.array_equal(self._dst.ids, other._dst.ids)
            )
        if isinstance(other, Hop):
            fields = (other.src, other.relation, other.dst, other.forward, other.triples)
            totals = (other.src_total, other.dst_total, other.triples_total)
            return self._fields() == (*fields, other.alt_relations, *totals)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())  # what Hop's dataclass hash gives for the same fields

    def __repr__(self) -> str:
        return repr(self.concrete())

    def __reduce__(self) -> tuple:
        return (Hop, self._fields())


def id_signature(path: ReasoningPath) -> tuple:
    """paths.path_signature on ids: equal, and ordered, exactly like it (see the module
    docstring), for paths whose hops are LazyHops of one graph."""
    return id_signature_of(path.hops)


def id_signature_of(hops: Sequence[Hop]) -> tuple:
    return tuple((h._src.key(), h.code, h._dst.key()) for h in hops)  # type: ignore[attr-defined]
