"""Clustering for local stores: a store subgraph (edge ids) -> ArrayClusteredGraph.

Why this shape: the stage runs on every question over up to 2x10^5 edges, so it
decodes no name, builds no Python object per edge, and hashes nothing (numpy 2.x's
`np.unique` hashes, 25x slower than sorting). The walk hands over the rows it read
(`Expansion.rows`: reading node, neighbour, relation, direction), so no head is looked up. Local ids follow the stored key
order (`keys.rank`, a permutation of the store's nodes): one mark per store node and a
scan give the distinct ranks in order, i.e. the local ids, with no sort at all (the mark
and the rank table are the store's pooled walk scratch, the rank -> node table is built
once per store); the edges are then sorted by pog/arrays/csr.py's radix sort, the in-edges
from the out-edges' order (only the digits above the head's).

API:
    from_store(kg, eids, topics, inverse_of, *, rows=None, keep_self_loops=False)
        -> ArrayClusteredGraph
    fold_inverse_arrays(h, r, t, rel_names, inverse_of, bases=None) -> mask of the edges kept
    suffix_bases(rel_names) -> the name-pair table fold_inverse_arrays can reuse
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from kgreason.pog.arrays.csr import mirror_mask, pack, unique_codes
from kgreason.pog.arrays.graph import ArrayClusteredGraph, edge_widths
from kgreason.pog.arrays.kernels.cluster import cluster_compiled
from kgreason.pog.arrays.names import NodeIndex, NodeNames

if TYPE_CHECKING:
    from kgreason.kg.store.kg import StoreKG
    from kgreason.kg.store.walk import ScratchPool

log = logging.getLogger(__name__)


#: name_pairs as a table: (bases[r, s] = id of relation r's name less INVERSE_SUFFIXES[s],
#: -1 if none; name -> id), built once per store (`suffix_bases`)
SuffixBases = tuple[np.ndarray, dict[str, int]]


def suffix_bases(rel_names: Sequence[str]) -> SuffixBases | None:
    """The table fold_inverse_arrays reads instead of running name_pairs over the present
    relations' names on every question (a Python loop over ~10^3 names); None when names
    repeat (the plain path then decides)."""
    from kgreason.kg.inverses import INVERSE_SUFFIXES

    ids = {x: i for i, x in enumerate(rel_names)}
    if len(ids) != len(rel_names):
        return None
    bases = np.full((len(rel_names), len(INVERSE_SUFFIXES)), -1, dtype=np.int64)
    for i, x in enumerate(rel_names):
        for k, suf in enumerate(INVERSE_SUFFIXES):
            base = ids.get(x[: -len(suf)]) if x.endswith(suf) else None
            if base is not None:
                bases[i, k] = base
    return bases, ids


def _inverse_ids(
    present: np.ndarray, table: SuffixBases, inverse_of: Mapping[str, str]
) -> np.ndarray:
    """inv[r] = the relation r folds into (-1: none), among the present relations: the
    first suffix whose base is present (name_pairs), then inverse_of's pairs override."""
    bases, ids = table
    inv = np.full(len(present), -1, dtype=np.int64)
    for k in range(bases.shape[1]):
        c = bases[:, k]
        ok = (inv < 0) & present & (c >= 0) & present[np.maximum(c, 0)]
        inv[ok] = c[ok]
    for a, b in inverse_of.items():
        ia, ib = ids.get(a), ids.get(b)
        if ia is not None and present[ia]:
            inv[ia] = ib if ib is not None and present[ib] else -1
    return inv


def fold_inverse_arrays(
    h: np.ndarray,
    r: np.ndarray,
    t: np.ndarray,
    rel_names: Sequence[str],
    inverse_of: Mapping[str, str],
    *,
    bases: SuffixBases | None = None,
) -> np.ndarray:
    """Mask of the edges kept by kg.inverses.fold_inverse_triples, on ids: an (h, inv, t)
    whose mirror (t, r, h) is present goes. `bases`: suffix_bases(rel_names), when kept."""
    inv = fold_ids(r, rel_names, inverse_of, bases=bases) if len(h) else None
    if inv is None:
        return np.ones(len(h), dtype=bool)
    n = int(max(h.max(), t.max())) + 1
    return ~mirror_mask(h, r, t, inv, n)


def fold_ids(
    r: np.ndarray,
    rel_names: Sequence[str],
    inverse_of: Mapping[str, str],
    *,
    bases: SuffixBases | None = None,
) -> np.ndarray | None:
    """inv[r] = the relation r folds into (-1: none) among the relations present in `r`;
    None when no pair is present (then nothing folds and no head/tail is needed)."""
    from kgreason.kg.inverses import name_pairs

    m = len(rel_names)
    if not len(r) or not m:
        return None
    counts = np.bincount(r, minlength=m)
    if bases is not None:
        inv = _inverse_ids(counts > 0, bases, inverse_of)
        return inv if (inv >= 0).any() else None
    names = {rel_names[i]: i for i in np.flatnonzero(counts).tolist()}
    pairs = name_pairs(names)
    pairs.update({k: v for k, v in inverse_of.items() if k in names})
    ids = {names[k]: names[v] for k, v in pairs.items() if k in names and v in names}
    if not ids:
        return None
    inv = np.full(m, -1, dtype=np.int64)
    inv[list(ids)] = list(ids.values())
    return inv


def rank_nodes(key_rank: np.ndarray) -> np.ndarray:
    """The node of each key rank (key_rank's inverse permutation), built once per store:
    the store ids of a subgraph's local ids are then one ordered gather."""
    out = np.empty(len(key_rank), dtype=key_rank.dtype)
    out[key_rank] = np.arange(len(key_rank), dtype=key_rank.dtype)
    return out


def _relabel_by_rank(
    parts: Sequence[np.ndarray], key_rank: np.ndarray, rank_node: np.ndarray, pool: ScratchPool
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """(local id of each end, per part; store id of each local id; key rank of each local
    id): local ids number the distinct ends (node ids in `parts`) in key order. Linear: a
    mark per store node, a scan; `rank_node` (rank_nodes) gives the local ids' nodes. The mark and the rank -> local table are a walk scratch
    of the store's pool (its stamped byte mask and int32 scratch; rank space has the size
    of node space): per-question arrays of the store's size cost a page fault per page
    touched. The parts are not concatenated (one fresh array less)."""
    with pool.take() as sc:
        buf = sc.buffer("rank", sum(len(x) for x in parts), key_rank.dtype)
        rks, a = [], 0
        for x in parts:  # (mode="clip": ids are valid, and `out` is buffered otherwise)
            rks.append(np.take(key_rank, x, out=buf[a : a + len(x)], mode="clip"))
            a += len(x)
        sc.visited[buf] = sc.stamp
        marked = np.equal(sc.visited, sc.stamp, out=sc.buffer("mark", len(sc.visited), bool))
        ranks = np.flatnonzero(marked)  # ascending: the local ids in key order
        lut = sc.node_scratch
        lut[ranks] = np.arange(len(ranks), dtype=lut.dtype)
        local = [np.take(lut, rk, mode="clip") for rk in rks]  # int32, fresh (packed next)
    return local, rank_node[ranks].astype(np.int64), ranks


def _relabel_by_keys(kg: StoreKG, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """_relabel_by_rank for stores built before keys.rank: sort the decoded keys."""
    nodes, inv = np.unique(ends, return_inverse=True)
    order = np.argsort(np.array(kg.index.keys.many(nodes), dtype=object), kind="stable")
    relabel = np.empty(len(nodes), dtype=np.int64)
    relabel[order] = np.arange(len(nodes))
    return relabel[inv.ravel()], nodes[order]


def _lookup(
    kg: StoreKG, by_local: np.ndarray, ranks: np.ndarray | None
) -> Callable[[list[str]], np.ndarray]:
    """names -> local ids (-1 = not in the subgraph), through the store's name index:
    a binary search among the local ids' key ranks (ascending), or, for stores without
    keys.rank, among their sorted store ids."""
    key_rank = kg.index.key_rank
    by_id: np.ndarray | None = None if ranks is not None else np.argsort(by_local)
    table = ranks if ranks is not None else by_local[by_id]

    def lookup(keys: list[str]) -> np.ndarray:
        gid = kg.index.lookup(keys)
        out = np.full(len(gid), -1, dtype=np.int64)
        hit = np.flatnonzero(gid >= 0)
        if not len(hit) or not len(table):
            return out
        want = gid[hit] if key_rank is None or ranks is None else key_rank[gid[hit]]
        pos = np.minimum(np.searchsorted(table, want), len(table) - 1)
        ok = table[pos] == want
        out[hit[ok]] = pos[ok] if by_id is None else by_id[pos[ok]]
        return out

    return lookup


def _compiled_graph(
    kg: StoreKG,
    own: np.ndarray,
    nbr: np.ndarray,
    r: np.ndarray,
    inn: np.ndarray | None,
    topics: Sequence[str],
) -> ArrayClusteredGraph | None:
    """from_store's graph of the (folded) rows by kernels.cluster.cluster_compiled: the same
    arrays as the numpy path; None when that path is to be used."""
    if kg.index.key_rank is None:
        return None
    memo = kg.graph.memo
    ordered = kg.index.key_ordered
    if not ordered and "rank_node" not in memo:  # (once per store)
        memo["rank_node"] = rank_nodes(kg.index.key_rank)
        log.info(
            "%s: node ids in first-appearance order (built by an earlier kgreason); "
            "rebuilding it (kgreason kg build --force) makes PoG's clustering ~1.5x faster",
            kg.path,
        )
    with kg.graph.scratch.take() as sc:
        rank = None if ordered else kg.index.key_rank
        got = cluster_compiled(own, nbr, r, inn, rank, sc, len(kg.relations))
    if got is None:
        return None
    *csr, ranks = got
    by_local = ranks if ordered else cast(np.ndarray, memo["rank_node"])[ranks].astype(np.int64)
    names = _store_names(kg, by_local)
    index = NodeIndex(names, _lookup(kg, by_local, ranks))
    return ArrayClusteredGraph.from_csr(csr, names, kg.relations, index, topics)


def _store_names(kg: StoreKG, by_local: np.ndarray) -> NodeNames:
    """Local id -> key and -> display name, both read from the store by node id."""
    return NodeNames(
        len(by_local),
        lambda ids: kg.index.keys.many(by_local[ids]),
        lambda ids: kg.index.display(by_local[ids]),
    )


def from_store(
    kg: StoreKG,
    eids: np.ndarray,
    topics: Sequence[str],
    inverse_of: Mapping[str, str],
    *,
    rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
    keep_self_loops: bool = False,
) -> ArrayClusteredGraph:
    """The ArrayClusteredGraph of a store subgraph (edge ids, any order), inverse pairs
    folded. `rows`: the walk's rows of those edges (`Expansion.rows`: reading node,
    neighbour, relation, in-row); without them the triples are looked up. Local ids follow
    the stored key order (`keys.rank`), so no name is decoded here. `keep_self_loops`: as
    ClusteredGraph.from_triples (the store keeps them; the graph drops them by default)."""
    inn: np.ndarray | None = None
    if rows is not None:
        own, nbr = (np.asarray(x, dtype=np.int64) for x in rows[:2])
        r, inn = np.asarray(rows[2]), rows[3]  # (r: a value here, never an index)
    else:
        triples = kg.graph.triples(eids)
        own, nbr = (np.asarray(x, dtype=np.int64) for x in triples[::2])
        r = np.asarray(triples[1])
    memo = kg.graph.memo  # tables derived once per store
    if "suffix_bases" not in memo:
        memo["suffix_bases"] = suffix_bases(kg.relations)
    bases = cast("SuffixBases | None", memo["suffix_bases"])
    inv = fold_ids(r, kg.relations, inverse_of, bases=bases)
    if inv is not None:  # some inverse pair is present: heads and tails are needed
        h, t = (own, nbr) if inn is None else (np.where(inn, nbr, own), np.where(inn, own, nbr))
        keep = ~mirror_mask(h, r, t, inv, int(max(h.max(), t.max())) + 1)
        if not keep.all():
            own, nbr, r = own[keep], nbr[keep], r[keep]
            inn = None if inn is None else inn[keep]
    # (the compiled loop drops self-loops: kept ones take the numpy form, ~1.1x slower)
    fast = None if keep_self_loops else _compiled_graph(kg, own, nbr, r, inn, topics)
    if fast is not None:  # large subgraphs: one compiled loop (kernels/build.py)
        return fast
    # reading nodes come in runs (a walk reads a node's rows together; sorted edge ids
    # have their heads in runs): look each run's node up once
    step = np.empty(len(own), dtype=bool)
    step[:1] = True
    np.not_equal(own[1:], own[:-1], out=step[1:])
    starts = np.flatnonzero(step)
    ranks: np.ndarray | None = None
    if kg.index.key_rank is not None:
        if "rank_node" not in memo:
            memo["rank_node"] = rank_nodes(kg.index.key_rank)
        rank_node = cast(np.ndarray, memo["rank_node"])
        parts = [own[starts], nbr]
        (l_runs, l_nbr), by_local, ranks = _relabel_by_rank(
            parts, kg.index.key_rank, rank_node, kg.graph.scratch
        )
    else:
        local, by_local = _relabel_by_keys(kg, np.concatenate([own[starts], nbr]))
        l_runs, l_nbr = local[: len(starts)], local[len(starts) :]
    names = _store_names(kg, by_local)
    index = NodeIndex(names, _lookup(kg, by_local, ranks))
    w = edge_widths(len(by_local), len(kg.relations))
    l_own = np.repeat(l_runs, np.diff(np.append(starts, len(own))))
    lh, lt = (
        (l_own, l_nbr)
        if inn is None
        else (np.where(inn, l_nbr, l_own), np.where(inn, l_own, l_nbr))
    )
    codes = unique_codes(pack((lh, r, lt), w), 1 << sum(w))
    return ArrayClusteredGraph.from_codes(
        codes, names, kg.relations, index, topics, keep_self_loops=keep_self_loops
    )
