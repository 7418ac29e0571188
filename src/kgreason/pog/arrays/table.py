"""Free paths from one topic entity kept as a table of steps, not as objects.

Why: a single-topic search on a 10M-triple KG returns up to `max_paths` (20,000) paths, and
making a LazyHop, a NameSet, a hop tuple and a ReasoningPath for every step took 20-35 % of
the paths stage on its slowest questions (measured interleaved in one process), though the
callers read little of them: fuzzy ranking reads each path's text, LLM-free mode keeps a
few dozen paths, the pruner a few hundred. So search.free_paths records each length's
steps as arrays (`Steps`: the parent partial path, the hop's key codes, the reached set as
a range of a node pool) and `TablePaths` is the search's `paths`:
- `paths[i]` makes path i when it is first read, sharing its prefix's hop objects (the same
  ReasoningPath, hops, sets and order as the object search made: tests compare);
- iterating makes them all, length by length in bulk (hop_maker.HopMaker's C-level maps);
- render.render_paths and render.displayed_ids read the arrays (pog/arrays/table_text.py): each
  distinct set and hop is rendered once, and a path's text is its prefix's text plus its
  last step's, so no object is made for a path that is only ranked.

API:
    Groups(key, alts): a length's hop key codes (primary first), list-like
    FreeTable(graph, start): .steps(k).add(st, m) per chunk of length k (its first m
        steps), .found(k, order) once per length (its first len(order) steps are paths,
        in that order); .chain(k, i), .chains_of(k), .all_chains(); len, .locate(j)
    TablePaths(table, entity_list): Sequence[ReasoningPath]; .table
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar, overload

import numpy as np

from kgreason.pog.arrays.hop_maker import HopMaker, make_paths
from kgreason.pog.arrays.hops import LazyHop, NameSet
from kgreason.pog.types import Hop, ReasoningPath

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import ArrayClusteredGraph
    from kgreason.pog.arrays.steps import _Steps
    from kgreason.pog.clustering import Key


class Groups(Sequence[tuple[int, ...]]):
    """The key codes of each step's hop (primary first) of one length: what a list of code
    tuples holds (`groups[i]`, `len`, `[:m]`), as an array of primaries and a dict of the
    few clustered hops' other codes, so no tuple is made per step."""

    __slots__ = ("alts", "key")

    def __init__(self, key: np.ndarray, alts: dict[int, tuple[int, ...]]):
        self.key, self.alts = key, alts

    def __len__(self) -> int:
        return len(self.key)

    @overload
    def __getitem__(self, i: int) -> tuple[int, ...]: ...
    @overload
    def __getitem__(self, i: slice) -> Groups: ...
    def __getitem__(self, i: int | slice) -> tuple[int, ...] | Groups:
        if isinstance(i, slice):
            if i.start not in (None, 0) or i.step not in (None, 1):
                raise ValueError("Groups: only a prefix slice [:m]")
            m = len(self.key) if i.stop is None else min(max(i.stop, 0), len(self.key))
            return Groups(self.key[:m], {j: v for j, v in self.alts.items() if j < m})
        j = i + len(self.key) if i < 0 else i
        return (int(self.key[j]), *self.alts.get(j, ()))

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        return (self[i] for i in range(len(self.key)))

    def flat(self) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, codes): step i's codes are codes[offsets[i]:offsets[i + 1]]."""
        n = len(self.key)
        lens = np.ones(n, dtype=np.int64)
        for j, v in self.alts.items():
            lens[j] += len(v)
        off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        flat = np.empty(int(off[-1]), dtype=np.int64)
        flat[off[:-1]] = self.key
        for j, v in self.alts.items():
            flat[off[j] + 1 : off[j + 1]] = v
        return off, flat


def group_arrays(groups: Sequence[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """Groups.flat() for Groups or a plain list of code tuples (the segment search's)."""
    if isinstance(groups, Groups):
        return groups.flat()
    from itertools import chain

    off = np.zeros(len(groups) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, groups), dtype=np.int64, count=len(groups)), out=off[1:])
    flat = np.fromiter(chain.from_iterable(groups), dtype=np.int64, count=int(off[-1]))
    return off, flat


class Steps:
    """One length's steps in the order made: step i extends partial path parent[i] of the
    length before by the hop `groups[i]` to the set pools[chunk[i]][a[i]:b[i]]."""

    def __init__(self) -> None:
        self._parts: list[tuple[np.ndarray, ...]] = []
        self._alts: dict[int, tuple[int, ...]] = {}
        self.pools: list[np.ndarray] = []
        self.n = 0
        self._joined: tuple[np.ndarray, ...] | None = None

    def add(self, st: _Steps, m: int) -> None:
        c = len(self.pools)
        self.pools.append(st.nodes)
        self._parts.append(
            (st.p[:m], st.key[:m], np.full(m, c, dtype=np.int64), st.a[:m], st.b[:m])
        )
        self._alts.update({self.n + i: v for i, v in st.alts.items() if i < m})
        self.n += m
        self._joined = None

    def arrays(self) -> tuple[np.ndarray, ...]:
        """(parent, key, chunk, a, b), joined over the chunks."""
        if self._joined is None:
            if not self._parts:
                z = np.zeros(0, dtype=np.int64)
                self._joined = (z, z, z, z, z)
            else:
                self._joined = tuple(np.concatenate(x) for x in zip(*self._parts, strict=True))
        return self._joined

    def groups(self) -> Groups:
        return Groups(self.arrays()[1], self._alts)


class FreeTable:
    """The free search's steps per length and which of them are paths, in output order:
    length k's paths are its first len(order) steps, in the order `found(k, order)` gave
    (shorter lengths first, as find_entity_paths orders paths)."""

    def __init__(self, g: ArrayClusteredGraph, start: int):
        self.g, self.start = g, start
        self.lengths: list[Steps] = []  # lengths[k - 1]
        self._out: list[tuple[int, np.ndarray]] = []  # (k, made indices in output order)
        self._ends: list[int] = []  # cumulative path counts over _out
        self._maker: HopMaker | None = None
        self._start_set: NameSet | None = None
        self._sets: dict[tuple[int, int, int, int], NameSet] = {}
        self._chains: list[dict[int, tuple[Hop, ...]]] = []
        self._bulk: list[list[tuple[Hop, ...]] | None] = []

    def steps(self, k: int) -> Steps:
        while len(self.lengths) < k:
            self.lengths.append(Steps())
            self._chains.append({})
            self._bulk.append(None)
        return self.lengths[k - 1]

    def found(self, k: int, order: np.ndarray) -> None:
        """Length k's first len(order) steps are paths, in this order."""
        if len(order):
            self._out.append((k, order))
            self._ends.append((self._ends[-1] if self._ends else 0) + len(order))

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def locate(self, j: int) -> tuple[int, int]:
        """(length, step) of path j."""
        if not 0 <= j < len(self):
            raise IndexError(j)
        o = bisect_right(self._ends, j)
        k, order = self._out[o]
        return k, int(order[j - (self._ends[o - 1] if o else 0)])

    # --- objects, made when read ------------------------------------------------------
    @property
    def maker(self) -> HopMaker:
        if self._maker is None:
            self._maker = HopMaker(self.g)
        return self._maker

    def start_set(self) -> NameSet:
        if self._start_set is None:
            self._start_set = self.maker.set(np.array([self.start], dtype=np.int64))
        return self._start_set

    def dst_set(self, k: int, i: int) -> NameSet:
        _, _, chunk, a, b = self.lengths[k - 1].arrays()
        c, a0, b0 = int(chunk[i]), int(a[i]), int(b[i])
        got = self._sets.get((k, c, a0, b0))
        if got is None:
            pool = self.lengths[k - 1].pools[c]
            got = self._sets[(k, c, a0, b0)] = self.maker.set(pool[a0:b0])
        return got

    def chain(self, k: int, i: int) -> tuple[Hop, ...]:
        """The hops of length k's step i and its prefixes."""
        bulk = self._bulk[k - 1]
        if bulk is not None:
            return bulk[i]
        memo = self._chains[k - 1]
        got = memo.get(i)
        if got is None:
            st = self.lengths[k - 1]
            parent, key = st.arrays()[:2]
            p = int(parent[i])
            before = self.chain(k - 1, p) if k > 1 else ()
            src = self.dst_set(k - 1, p) if k > 1 else self.start_set()
            codes = st.groups()[i]
            hop = LazyHop.make(src, self.maker.keys(codes), self.dst_set(k, i), int(key[i]))
            got = memo[i] = (*before, hop)
        return got

    def chains_of(self, k: int) -> list[tuple[Hop, ...]]:
        """Every chain of length k, made together (bulk): HopMaker's sets and hops."""
        got = self._bulk[k - 1]
        if got is not None:
            return got
        st = self.lengths[k - 1]
        parent, key, chunk, a, b = st.arrays()
        maker = self.maker
        if k > 1:
            before = self.chains_of(k - 1)
            srcs = [h[-1].dst_set for h in before]  # type: ignore[attr-defined]
            src_of = [srcs[p] for p in parent.tolist()]
            pre = [before[p] for p in parent.tolist()]
        else:
            src_of = [self.start_set()] * len(parent)
            pre = [()] * len(parent)
        dsts: list[NameSet] = []
        for c, pool in enumerate(st.pools):
            sel = np.flatnonzero(chunk == c)
            dsts += maker.sets(pool, a[sel], b[sel])
        keys = self._keys(st.groups())
        hops = HopMaker.hops(src_of, keys, dsts, key.tolist())
        out = [(*p, h) for p, h in zip(pre, hops, strict=True)]
        self._bulk[k - 1] = out
        return out

    def _keys(self, groups: Groups) -> list[tuple[Key, ...]]:
        maker = self.maker
        single = {c: maker.keys((c,)) for c in np.unique(groups.key).tolist()}
        out = [single[c] for c in groups.key.tolist()]
        for j in groups.alts:
            out[j] = maker.keys(groups[j])
        return out

    def all_chains(self) -> list[tuple[Hop, ...]]:
        """Every path's hops, in output order."""
        out: list[tuple[Hop, ...]] = []
        for k, order in self._out:
            chains = self.chains_of(k)
            out += [chains[i] for i in order.tolist()]
        return out

    def paths_out(self) -> list[tuple[int, np.ndarray]]:
        """(length, its paths' steps in output order) per length with paths."""
        return self._out


class TablePaths(Sequence[ReasoningPath]):
    """A FreeTable's paths as a sequence of ReasoningPaths made when read (each once, so
    paths[i] is paths[i]); compares equal to a list of the same paths. Rendered from the
    table's arrays (the array backend's render_texts, shown_ids, path_texts)."""

    backend: ClassVar[str] = "kgreason.pog.arrays.backend"

    def __init__(self, table: FreeTable, entity_list: tuple[str, ...]):
        self.table, self.entity_list = table, entity_list
        self._made: dict[int, ReasoningPath] = {}
        self._all: list[ReasoningPath] | None = None

    def __len__(self) -> int:
        return len(self.table)

    @overload
    def __getitem__(self, i: int) -> ReasoningPath: ...
    @overload
    def __getitem__(self, i: slice) -> list[ReasoningPath]: ...
    def __getitem__(self, i: int | slice) -> ReasoningPath | list[ReasoningPath]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if self._all is not None:
            return self._all[i]
        n = len(self)
        j = i + n if i < 0 else i
        got = self._made.get(j)
        if got is None:
            got = self._made[j] = make_paths(
                [self.table.chain(*self.table.locate(j))], self.entity_list
            )[0]
        return got

    def _every(self) -> list[ReasoningPath]:
        if self._all is None:
            made = make_paths(self.table.all_chains(), self.entity_list)
            for j, p in self._made.items():  # the paths already handed out stay the same objects
                made[j] = p
            self._all = made
        return self._all

    def __iter__(self) -> Iterator[ReasoningPath]:
        return iter(self._every())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (TablePaths, list)):  # (as a list: never equal to a tuple)
            return list(self) == list(other)
        return NotImplemented

    def __reduce__(self) -> tuple:
        """Pickled and copied as the list of its paths (whose hops pickle as plain Hops),
        not with the graph the table holds."""
        return (list, (list(self),))

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[ReasoningPath]) -> list[ReasoningPath]:
        return [*self, *other]

    def __radd__(self, other: Sequence[ReasoningPath]) -> list[ReasoningPath]:
        return [*other, *self]

    def __repr__(self) -> str:
        return f"TablePaths({len(self)} paths)"
