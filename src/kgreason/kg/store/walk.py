"""What a breadth-first walk over a CSRGraph works with and returns: edge batches, the
result (`Expansion`, with the found edges' triples: `Found`), the per-walk masks and work
buffers (`WalkScratch`, pooled per graph) and the O(n) array helpers (order-preserving
dedupe, row positions, the radix sort the store's sorts share, the cut's left-out scan).

Why a pool: a walk marks visited nodes and seen edges in arrays as long as the graph. A
fresh np.zeros/np.empty per walk costs a page fault on every page the walk touches (tens
of thousands at 10M triples, more time than the walk's own work), so each graph keeps the
arrays of finished walks; stamps (WalkScratch) make clearing them unnecessary for the
numpy walk, and the compiled walk (and clustering) zero the bits they set in the
scratch's bitmaps (`walk_bits`) before they return. The same
holds for a walk's large temporaries (row positions, edge ids, gathers: a fault costs
~2.5 us on the measuring VM, a 2x10^5-row int64 array 400 of them), so they are
WalkScratch buffers too. One walk owns its scratch until it ends; concurrent walks
(server worker threads) each take their own. A graph keeps at most POOL_KEEP of them
(n_edges + 5 * n_nodes bytes each once touched, and 1/8 of that again for the bitmaps:
17 MB at 10M triples, plus the buffers: ~18 MB there); edge-sized int32 scratch
(expand_grouped's dedupe) is not kept.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kgreason.kg.store.bound import GroupCut, GroupTable
    from kgreason.kg.store.graph import CSRGraph

#: Below this many values np.sort beats radix_sort.
RADIX_MIN = 1 << 12
#: WalkScratch.buffer keeps work arrays of at most this many bytes (a question's slices
#: hold ~4x10^5 rows: 3 MB of int64; only a hub's chunk of rows is larger)
BUFFER_KEEP = 1 << 23
#: Finished walks' scratch a graph keeps for reuse, at most (one per concurrent walk).
POOL_KEEP = 4
#: WalkScratch stamps run 1..STAMP_MAX; PAIR and DROP are a slice's temporary edge marks.
STAMP_MAX = 253
PAIR = 254
DROP = 255


@dataclass
class Edges:
    """A batch of edges seen from some nodes: per node, out-edges then in-edges, file order.
    `owner` indexes the queried node array; `out` is True where the neighbour is the tail."""

    owner: np.ndarray
    nbr: np.ndarray
    rel: np.ndarray
    out: np.ndarray
    eid: np.ndarray


@dataclass
class Expansion:
    eids: np.ndarray  # edge ids in discovery order
    truncated: bool
    reason: str = ""
    #: when truncated: the hop (1-based) that was cut and how many edge slots of that hop's
    #: frontier were not read (an upper bound on the triples the cut left out at that hop;
    #: farther hops were not explored at all)
    cut_hop: int = 0
    unread_edges: int = 0
    #: what the unread edges of the cut hop hold: distinct relations and distinct entities
    #: not reached otherwise (counted over at most LEFT_OUT_SCAN edge slots; `left_out_exact`
    #: False when there were more)
    left_out_relations: int = 0
    left_out_entities: int = 0
    left_out_exact: bool = True
    #: expand_grouped only: rows of cut hops not read at all (hub rows past the read budget)
    unread_rows: int = 0
    #: expand_grouped only: the truncated groups as arrays (`groups` builds the objects)
    group_table: GroupTable | None = None
    #: the rows that took `eids`, when the walk kept them (both walks do): the node that
    #: read each row, its neighbour, the relation, and whether it was an in-row (the
    #: neighbour is the head). Clustering reads them instead of looking heads up.
    rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = field(
        default=None, repr=False, compare=False
    )
    _groups: list[GroupCut] | None = field(default=None, repr=False, compare=False)

    @property
    def triples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(head, rel, tail) node/relation ids of `eids`, row by row (from `rows`)."""
        if self.rows is None:
            return None
        own, nbr, rel, inn = self.rows
        return np.where(inn, nbr, own), rel, np.where(inn, own, nbr)

    @property
    def groups(self) -> list[GroupCut]:
        """expand_grouped only: the (relation, direction) groups a cut truncated, by hop,
        largest cut first. Built on first use: a hub hop can truncate 10^4+ groups."""
        if self._groups is None:
            self._groups = [] if self.group_table is None else self.group_table.cuts()
        return self._groups


#: Found's first buffers hold at most this many edges; past it they grow by doubling (a
#: huge max_triples must not reserve gigabytes of address space up front)
FOUND_START = 1 << 20


class Found:
    """The edges a walk takes, written in place as it goes: edge ids (int64) and the rows
    that took them (Expansion.rows: reading node, neighbour, relation, in-row), in
    discovery order. The buffers are allocated untouched (np.empty) for the most the walk
    may take (up to FOUND_START, then doubled), so only what is written costs memory, and
    no batch is copied again at the end (fresh pages cost more than the walk's reads)."""

    NAMES = ("eids", "own", "nbr", "rel", "inn")

    def __init__(self, capacity: int, rel_dtype: np.dtype):
        size = min(capacity, FOUND_START)
        self.eids: np.ndarray = np.empty(size, dtype=np.int64)
        self.own: np.ndarray = np.empty(size, dtype=np.int64)
        self.nbr: np.ndarray = np.empty(size, dtype=np.int64)
        self.rel: np.ndarray = np.empty(size, dtype=rel_dtype)
        self.inn: np.ndarray = np.empty(size, dtype=bool)
        self.count = 0

    def claim(self, eids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Append `eids`; returns the (own, nbr, rel, inn) slots to fill for them."""
        a, b = self.count, self.count + len(eids)
        if b > len(self.eids):
            size = max(b, 2 * len(self.eids))
            for name in self.NAMES:
                old = getattr(self, name)
                new = np.empty(size, dtype=old.dtype)
                new[:a] = old[:a]
                setattr(self, name, new)
        self.eids[a:b] = eids
        self.count = b
        return self.own[a:b], self.nbr[a:b], self.rel[a:b], self.inn[a:b]

    def rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        c = self.count
        return self.own[:c], self.nbr[:c], self.rel[:c], self.inn[:c]


class WalkScratch:
    """One walk's visited-node and seen-edge marks and int32 node scratch for
    first-occurrence dedupe (content irrelevant): n_edges + 5 * n_nodes bytes, kept, and
    the same marks as bitmaps for the compiled loops (`walk_bits`, zero between walks). In
    the stamp arrays a node or edge is marked by the walk's stamp (1 ..
    STAMP_MAX), so the next walk starts clean by taking the next stamp instead of clearing
    what this one set; every STAMP_MAX walks the masks are zeroed. PAIR and DROP are above
    every stamp: a slice's own short-lived marks (CSRGraph._new_rows)."""

    def __init__(self, n_nodes: int, n_edges: int):
        self.visited = np.zeros(n_nodes, dtype=np.uint8)
        self.seen = np.zeros(n_edges, dtype=np.uint8)
        self.node_scratch = np.empty(n_nodes, dtype=np.int32)
        self.stamp = 0
        self._bufs: dict[str, np.ndarray] = {}
        self._bits: tuple[np.ndarray, np.ndarray] | None = None

    def walk_bits(self) -> tuple[np.ndarray, np.ndarray]:
        """(seen edges, visited nodes) as bitmaps of uint64 words, zeroed when made and
        zeroed again by whoever sets bits before the walk ends (the compiled walk,
        kernels/walk.py): 1 bit a mark instead of the stamp arrays' byte keeps a walk's
        random reads in cache (the walk measured 2.2x faster at 10M triples)."""
        if self._bits is None:
            self._bits = (
                np.zeros((len(self.seen) + 63) // 64, dtype=np.uint64),
                np.zeros((len(self.visited) + 63) // 64, dtype=np.uint64),
            )
        return self._bits

    def buffer(self, name: str, n: int, dtype: type | np.dtype) -> np.ndarray:
        """A work array of n items, kept with the scratch and reused by the next walk (a
        fresh large array faults in every page it touches); only valid until the next
        call with this name. Grows by doubling, up to BUFFER_KEEP bytes."""
        if n * np.dtype(dtype).itemsize > BUFFER_KEEP:  # a hub's rows: not kept per scratch
            return np.empty(n, dtype)
        key = f"{name}:{np.dtype(dtype).str}"
        buf = self._bufs.get(key)
        if buf is None or len(buf) < n:  # doubling, but never past BUFFER_KEEP
            cap = BUFFER_KEEP // np.dtype(dtype).itemsize
            grown = min(2 * len(buf), cap) if buf is not None else n
            buf = self._bufs[key] = np.empty(max(n, grown), dtype)
        return buf[:n]

    def begin(self) -> None:
        """Start a walk: nothing visited or seen."""
        self.stamp += 1
        if self.stamp > STAMP_MAX:
            self.visited.fill(0)
            self.seen.fill(0)
            self.stamp = 1

    def visit(self, nodes: np.ndarray) -> None:
        self.visited[nodes] = self.stamp

    def see(self, eids: np.ndarray) -> None:
        self.seen[eids] = self.stamp

    def unvisited(self, nodes: np.ndarray) -> np.ndarray:
        return self.visited[nodes] != self.stamp

    def unseen(self, eids: np.ndarray) -> np.ndarray:
        return self.seen[eids] != self.stamp


class ScratchPool:
    """WalkScratch for one graph's walks, reused (see the module docstring). Thread-safe:
    a walk takes a scratch nobody else holds, or a new one."""

    def __init__(self, n_nodes: int, n_edges: int, keep: int = POOL_KEEP):
        self.n_nodes, self.n_edges, self.keep = n_nodes, n_edges, keep
        self._free: list[WalkScratch] = []
        self._lock = threading.Lock()

    @contextmanager
    def take(self) -> Iterator[WalkScratch]:
        with self._lock:
            sc = self._free.pop() if self._free else None
        if sc is None:
            sc = WalkScratch(self.n_nodes, self.n_edges)
        sc.begin()
        yield sc  # a walk that raised drops its scratch (it may hold PAIR/DROP marks)
        with self._lock:
            if len(self._free) < self.keep:
                self._free.append(sc)


def first_index(values: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each value, in order (see first_occurrences)."""
    order = np.arange(len(values), dtype=np.int32)
    if len(values) < 2:
        return order
    scratch[values] = len(values)
    np.minimum.at(scratch, values, order)
    return np.flatnonzero(scratch[values] == order)


def first_occurrences(values: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """values without repeats, in order of first occurrence, in O(n) (np.unique sorts).
    `scratch` is any int32 array indexable by the values; its content is irrelevant."""
    if len(values) < 2:
        return values
    order = np.arange(len(values), dtype=np.int32)
    scratch[values] = len(values)
    np.minimum.at(scratch, values, order)
    return values[scratch[values] == order]


def count_distinct(values: np.ndarray, scratch: np.ndarray) -> int:
    """len(np.unique(values)) in O(n) (numpy's unique hashes or sorts; far slower here).
    Each value's slot keeps the index of ONE of its occurrences (whichever write lands
    last), so exactly one occurrence per value reads its own index back: a plain scatter,
    no ufunc.at (first_occurrences needs the first one, this count does not)."""
    if len(values) < 2:
        return len(values)
    order = np.arange(len(values), dtype=np.int32)
    scratch[values] = order
    return int(np.count_nonzero(scratch[values] == order))


def radix_sort(values: np.ndarray, bound: int, *, sorted_bits: int = 0) -> np.ndarray:
    """np.sort(values) (int64) for non-negative ints below `bound`, by an LSD radix sort on
    16-bit digits (numpy's stable argsort of uint16 is a counting sort), over an int32 copy
    when the values fit: O(n) per digit instead of a comparison sort. `sorted_bits`: the
    values already come in order of their low `sorted_bits` bits, so those digits are
    skipped (a stable pass over the higher digits keeps that order among equals).
    Below RADIX_MIN values np.sort is faster (and used)."""
    values = np.asarray(values, dtype=np.int64)
    if len(values) < RADIX_MIN:
        return np.sort(values)
    width = max(int(bound - 1).bit_length(), 1)
    from kgreason.kg.store.kernels.build import radix_compiled  # (numba only on large inputs)

    got = radix_compiled(values, width, sorted_bits)
    if got is not None:  # one counting pass, one scatter per digit (kernels/build.py)
        return got
    x = values.astype(np.int32) if width < 32 else values
    passes = range(sorted_bits, width, 16)
    if not passes:  # already sorted: a copy, as np.sort returns
        return values.copy()
    for shift in passes:
        digit = np.uint8 if width - shift <= 8 else np.uint16  # as narrow as fits
        x = x[np.argsort((x >> shift).astype(digit), kind="stable")]
    return x.astype(np.int64, copy=False)


def sort_edge_ids(ids: np.ndarray, bound: int) -> np.ndarray:
    """np.sort(ids) for non-negative int64 edge ids below `bound` (radix_sort: 3-4x faster
    than a comparison sort for a subgraph's 10^5 ids)."""
    return radix_sort(ids, bound)


def slice_owner(seg_end: np.ndarray, seg_node: np.ndarray, a: int, b: int) -> np.ndarray:
    """The node owning each of the rows a .. b - 1 of a run of segments (segment k ends at
    row seg_end[k] and is owned by seg_node[k]): O(b - a), whatever the run's length."""
    if b <= a:
        return np.zeros(0, dtype=np.int64)
    s0 = int(np.searchsorted(seg_end, a, side="right"))
    s1 = int(np.searchsorted(seg_end, b - 1, side="right")) + 1
    ends = np.minimum(seg_end[s0:s1], b)
    begins = np.maximum(np.concatenate([seg_end[s0 - 1 : s0] if s0 else [0], ends[:-1]]), a)
    return np.repeat(seg_node[s0:s1], ends - begins)


def left_out(
    graph: CSRGraph,
    tail: tuple[np.ndarray, np.ndarray, np.ndarray],
    rest: np.ndarray,
    chunks: list[np.ndarray],
    sc: WalkScratch,
    scan: int,
) -> tuple[int, int, bool]:
    """(relations, entities, exact) held by the edges a cut did not take: the rows of
    the cut slice from the first edge not taken (`tail`: their eid, rel, nbr), the
    chunk's unread positions `rest`, then the level's remaining chunks of nodes; at most
    `scan` edge slots (CSRGraph.expand's cut report)."""
    rels: list[np.ndarray] = []
    nbrs: list[np.ndarray] = []
    t_eid, t_rel, t_nbr = tail
    if len(t_eid) >= scan:  # the cut slice alone fills the budget
        rest, chunks = rest[:0], []
        exact = False
    else:
        exact = True
    head = rest[: max(0, scan - len(t_eid))]
    eds = [Edges(t_eid, t_nbr, t_rel, t_eid, t_eid)]  # owner and out are not used
    eds.append(graph.gather(head, np.zeros(len(head), dtype=np.int64)))
    scanned = len(t_eid) + len(head)
    exact = exact and len(head) == len(rest)
    for k, chunk in enumerate(chunks):
        if scanned >= scan:
            exact = exact and k == len(chunks)
            break
        take = scan - scanned
        dout, din = graph.degree(chunk)
        whole = len(chunk)
        chunk = chunk[: int(np.searchsorted(np.cumsum(dout + din), take)) + 1]
        exact = exact and len(chunk) >= whole
        pos, owner = graph.positions(chunk)
        eds.append(graph.gather(pos[:take], owner[:take]))
        exact = exact and len(pos) <= take
        scanned += min(len(pos), take)
    for ed in eds:
        cut = sc.unseen(ed.eid)
        rels.append(ed.rel[cut])
        nbrs.append(ed.nbr[cut & sc.unvisited(ed.nbr)])
    n_rel = int(np.count_nonzero(np.bincount(np.concatenate(rels))))
    n_ent = count_distinct(np.concatenate(nbrs), sc.node_scratch)
    return n_rel, n_ent, exact


def chunk_bounds(cum: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Split a frontier (cumulative row counts `cum`) into runs of about `budget` rows:
    (start, end) indices; a run ends at the node that reaches the next multiple."""
    if len(cum) == 0 or cum[-1] <= budget:
        return [(0, len(cum))]
    cuts = np.searchsorted(cum, np.arange(budget, int(cum[-1]), budget), side="left") + 1
    edges = [0, *np.unique(cuts).tolist(), len(cum)]
    return [(x, y) for x, y in pairwise(edges) if y > x]
