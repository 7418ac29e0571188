"""Node names of the array graph (pog/arrays/graph.py): local id <-> node key, lazily.

Why: a question's subgraph can hold 10^5 nodes, of which path search shows a few hundred
(names only for what is shown or sent to the LLM), so names are decoded on first
read and no dict over every node is built.

API:
    NodeNames(n, decode)[ids] -> object array of keys;  NodeNames.given(names)
    NodeIndex(names, lookup).many(keys) -> local ids (-1 = absent); a Mapping[str, int]
    dict_lookup(names) -> lookup over an in-memory name array
    LazyAdj(g, cache): the graph's `adj` (name -> {(relation, forward): neighbour names}),
    per node on first access, into the graph's cache
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kgreason.pog.clustering import Key

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import ArrayClusteredGraph


class NodeNames:
    """Local id -> node key, decoded on first use and kept. `__getitem__` takes an int or
    an int array."""

    def __init__(
        self,
        n: int,
        decode: Callable[[np.ndarray], list[str]],
        display: Callable[[np.ndarray], list[str]] | None = None,
    ):
        self._n, self._decode = n, decode
        #: local ids -> the KG's display names (KnowledgeGraph.names of their keys), where
        #: the graph's nodes are a store's: no lookup by key (~2 us a key at 10M)
        self.display = display
        self._cache = np.empty(n, dtype=object)
        self._have = np.zeros(n, dtype=bool)
        self._index: weakref.ref[NodeIndex] | None = None

    @property
    def index(self) -> NodeIndex | None:
        """key -> local id, once a NodeIndex is made over these names (Hop.count_answers
        finds the topics in a set by key without decoding the set). Held weakly: the index
        holds these names, and a cycle left a question's graph to the cyclic collector."""
        return None if self._index is None else self._index()

    @index.setter
    def index(self, value: NodeIndex | None) -> None:
        self._index = None if value is None else weakref.ref(value)

    @classmethod
    def given(cls, names: np.ndarray) -> NodeNames:
        out = cls(len(names), lambda ids: names[ids].tolist())
        out._cache[:] = names
        out._have[:] = True
        return out

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, ids: Any) -> Any:
        if isinstance(ids, (int, np.integer)):
            return self[np.array([ids], dtype=np.int64)][0]
        ids = np.asarray(ids, dtype=np.int64)
        miss = ids[~self._have[ids]]
        if len(miss):  # a repeated id is decoded twice: cheaper than np.unique on every read
            self._cache[miss] = self._decode(miss)
            self._have[miss] = True
        return self._cache[ids]

    def tolist(self) -> list[str]:
        return self[np.arange(self._n)].tolist()  # type: ignore[no-any-return]


class NodeIndex(Mapping[str, int]):
    """name -> local id through `lookup` (a batch of names -> local ids, -1 = absent),
    cached per name; no dict over every node of the subgraph is built."""

    def __init__(self, names: NodeNames, lookup: Callable[[list[str]], np.ndarray]):
        self._names, self._lookup = names, lookup
        self._cache: dict[str, int] = {}
        names.index = self

    def many(self, keys: Sequence[str]) -> np.ndarray:
        todo = [k for k in dict.fromkeys(keys) if k not in self._cache]
        if todo:
            self._cache.update(zip(todo, self._lookup(todo).tolist(), strict=True))
        return np.array([self._cache[k] for k in keys], dtype=np.int64)

    def get(self, key: object, default: Any = None) -> Any:
        if not isinstance(key, str):
            return default
        u = int(self.many([key])[0])
        return default if u < 0 else u

    def __getitem__(self, key: str) -> int:
        u = self.get(key)
        if u is None:
            raise KeyError(key)
        return u  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._names.tolist())

    def __len__(self) -> int:
        return len(self._names)


def dict_lookup(names: np.ndarray) -> Callable[[list[str]], np.ndarray]:
    index = {s: i for i, s in enumerate(names.tolist())}
    return lambda keys: np.array([index.get(k, -1) for k in keys], dtype=np.int64)


class LazyAdj(Mapping[str, dict[Key, tuple[str, ...]]]):
    """name -> {(relation, forward): neighbour names}, built per node on first access."""

    def __init__(self, g: ArrayClusteredGraph, cache: dict[int, dict[Key, tuple[str, ...]]]):
        self._g, self._cache = g, cache  # (the graph's own: views made per read share it)

    def _local(self, name: object) -> int:
        u = self._g.index.get(name)
        if u is None or self._g.degree[u] == 0:
            return -1
        return int(u)

    def __getitem__(self, name: str) -> dict[Key, tuple[str, ...]]:
        u = self._local(name)
        if u < 0:
            raise KeyError(name)
        got = self._cache.get(u)
        if got is None:
            got = self._cache[u] = self._g.entry(u)
        return got

    def __contains__(self, name: object) -> bool:
        return self._local(name) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._g.names[np.flatnonzero(self._g.degree)].tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._g.degree))
