"""The relation-aware subgraph bound (PoGSettings.subgraph_bound = "relation-aware"):
`expand_grouped` walks like CSRGraph.expand but, at a hop that does not fit the budget,
shares the budget across the hop's relation groups (`share_budget`, `_round_robin`) and
records what each truncated group kept (`GroupTable`, `GroupCut`).

Sorting here goes through `radix_argsort` (16-bit counting passes): a hub hop holds 10^5 -
10^6 rows, where numpy's comparison sorts took most of the bound's time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.kg.store.walk import Expansion, first_index

if TYPE_CHECKING:
    from kgreason.kg.store.graph import CSRGraph

#: Rows one hop of expand_grouped reads, at most: max(READ_MIN, READ_FACTOR * max_triples).
#: An edge shows up in at most two rows of a hop, so a hop with more than 4 * max_triples
#: rows holds more than 2 * max_triples - count new edges and can never fit the budget:
#: reading only that many never changes an uncut result (noise rows aside, which count).
READ_MIN = 1 << 16
READ_FACTOR = 4
#: radix_argsort falls back to np.argsort(kind="stable") past this many 16-bit digits.
RADIX_MAX_DIGITS = 3


@dataclass
class GroupCut:
    """One (relation, direction) group of a hop that the relation-aware bound truncated:
    `kept` of its `total` new edges were taken. `out` is True for edges leaving the frontier."""

    hop: int
    rel: int
    out: bool
    kept: int
    total: int
    #: the (relation, out) steps from the topic before this one, when grouped by path
    via: tuple[tuple[int, bool], ...] = ()


@dataclass
class _HopCuts:
    hop: int
    keys: np.ndarray  # group key: path group of the parent * n_keys + rel * 2 + out
    kept: np.ndarray
    total: np.ndarray
    #: per earlier level, the groups' (parent group, rel*2+out); empty when not by path
    paths: tuple[tuple[np.ndarray, np.ndarray], ...]


class GroupTable:
    """The truncated groups of an expand_grouped walk as arrays, per cut hop; GroupCut
    objects are built only for what is read (`cuts`, `summary`)."""

    def __init__(self, n_keys: int):
        self.n_keys = n_keys
        self.hops: list[_HopCuts] = []

    def add(self, hop: int, keys, kept, total, paths) -> None:
        # largest cut first; ties in key order (a stable sort of the key-ordered groups)
        o = np.argsort(kept - total, kind="stable")
        self.hops.append(_HopCuts(hop, keys[o], kept[o], total[o], tuple(paths)))

    def _cut(self, h: _HopCuts, i: int) -> GroupCut:
        k = int(h.keys[i])
        step = k % self.n_keys
        via = _via(list(h.paths), k // self.n_keys) if h.paths else ()
        return GroupCut(h.hop, step // 2, bool(step % 2), int(h.kept[i]), int(h.total[i]), via)

    def cuts(self) -> list[GroupCut]:
        """Every truncated group, by hop, largest cut (total - kept) first."""
        return [self._cut(h, i) for h in self.hops for i in range(len(h.keys))]

    def summary(self, limit: int) -> list[tuple[int, int, int, list[GroupCut]]]:
        """Per cut hop: (hop, groups truncated, groups that got no edge, the first `limit`
        groups as in `cuts`)."""
        return [
            (
                h.hop,
                len(h.keys),
                int(np.count_nonzero(h.kept == 0)),
                [self._cut(h, i) for i in range(min(limit, len(h.keys)))],
            )
            for h in self.hops
        ]

    def dropped_relations(self) -> int:
        """Distinct relations of the groups that kept no edge."""
        rels = [(h.keys[h.kept == 0] % self.n_keys) // 2 for h in self.hops]
        return len(np.unique(np.concatenate(rels))) if rels else 0


def share_budget(sizes: np.ndarray, budget: int) -> np.ndarray:
    """Max-min fair shares (water-filling): every group gets min(size, c) for the largest c
    the budget allows, so the biggest groups are the ones truncated; the few slots left
    over go one each to the smallest of the truncated groups. With fewer slots than
    groups, the smallest groups get one edge each."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if int(sizes.sum()) <= budget:
        return sizes.copy()
    order = np.argsort(sizes, kind="stable")
    s = sizes[order]
    n = len(s)
    prefix = np.concatenate([[0], np.cumsum(s)[:-1]])
    at = prefix + s * (n - np.arange(n))  # total taken if c = s[k]; non-decreasing in k
    k = int(np.searchsorted(at, budget, side="right")) - 1
    c = budget // n if k < 0 else int(s[k]) + (budget - int(at[k])) // (n - k - 1)
    take = np.minimum(sizes, c)
    extra = budget - int(take.sum())
    if extra > 0:
        big = order[sizes[order] > c][:extra]
        take[big] += 1
    return take


def radix_argsort(keys: np.ndarray, bound: int) -> np.ndarray:
    """np.argsort(keys, kind="stable") for non-negative int keys below `bound`: LSD radix
    over 16-bit digits (numpy's stable argsort of uint16 is a counting sort)."""
    digits = max(1, (max(int(bound), 2) - 1).bit_length() + 15 >> 4)
    if digits > RADIX_MAX_DIGITS or len(keys) < 2:
        return np.argsort(keys, kind="stable")
    keys = np.asarray(keys, dtype=np.int64)
    o = np.argsort(keys.astype(np.uint16), kind="stable")
    for d in range(1, digits):
        o = o[np.argsort((keys[o] >> (16 * d)).astype(np.uint16), kind="stable")]
    return o


def unique_inverse_counts(
    keys: np.ndarray, bound: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(keys, return_inverse=True, return_counts=True) by radix_argsort."""
    if len(keys) == 0:
        return keys.copy(), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    o = radix_argsort(keys, bound)
    ks = keys[o]
    head = np.empty(len(ks), dtype=bool)
    head[0] = True
    np.not_equal(ks[1:], ks[:-1], out=head[1:])
    starts = np.flatnonzero(head)
    inv = np.empty(len(ks), dtype=np.int64)
    inv[o] = np.cumsum(head) - 1
    return ks[starts], inv, np.diff(np.append(starts, len(ks)))


def _round_robin(owner: np.ndarray, group: np.ndarray, take: np.ndarray) -> np.ndarray:
    """Mask of the rows kept when group g keeps take[g] rows: inside a truncated group the
    k-th row of every owner comes before any owner's (k+1)-th, then row order. Rows are
    owner-major (as gathered), so a stable sort keeps row order inside each run."""
    keep = np.ones(len(owner), dtype=bool)
    sizes = np.bincount(group, minlength=len(take))
    rows = np.flatnonzero((take < sizes)[group])
    if len(rows) == 0:
        return keep
    g, own = group[rows], owner[rows]
    # a stable sort by group keeps row order inside each group, so owners come in runs
    o = radix_argsort(g, len(take))
    gs, os_ = g[o], own[o]
    starts = np.flatnonzero(np.r_[True, (gs[1:] != gs[:-1]) | (os_[1:] != os_[:-1])])
    rank = np.empty(len(rows), dtype=np.int64)
    rank[o] = np.arange(len(rows)) - np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
    width = int(rank.max()) + 1
    o2 = radix_argsort(g * width + rank, len(take) * width)
    gs = g[o2]
    gstart = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
    at = np.arange(len(o2)) - np.repeat(gstart, np.diff(np.r_[gstart, len(o2)]))
    keep[rows] = False
    keep[rows[o2[at < take[gs]]]] = True
    return keep


def _via(paths: list[tuple[np.ndarray, np.ndarray]], parent: int) -> tuple[tuple[int, bool], ...]:
    """The (relation, out) steps of a path group's ancestors, topic first."""
    steps: list[tuple[int, bool]] = []
    for parents, keys in reversed(paths):
        if not len(keys):
            break
        k = int(keys[parent])
        steps.append((k // 2, bool(k % 2)))
        parent = int(parents[parent])
    return tuple(reversed(steps))


def capped_positions(
    graph: CSRGraph, nodes: np.ndarray, budget: int
) -> tuple[np.ndarray, np.ndarray]:
    """graph.positions() with at most `budget` rows in all: the (node, direction) segments
    share it by water-filling, so a hub's rows are cut before anyone else's."""
    dout, din = graph.degree(nodes)
    lens = share_budget(np.stack([dout, din], axis=1).ravel(), budget)
    starts = np.stack([graph.fwd_ptr[nodes], graph.rev_ptr[nodes] + graph.n_edges], axis=1)
    per_node = lens.reshape(-1, 2).sum(axis=1)
    pos = ranges(starts.ravel(), lens)
    return pos, np.repeat(np.arange(len(nodes), dtype=np.int64), per_node)


def expand_grouped(
    graph: CSRGraph, seeds: np.ndarray, depth: int, max_triples: int, *, by_path: bool = True
) -> Expansion:
    """Breadth-first expansion like `CSRGraph.expand`, with a relation-aware bound. A hop
    whose new edges fit the remaining budget is taken whole, so without a cut the edges are
    exactly `expand`'s. A hop that does not fit gets the remaining budget split evenly
    over the hops left (all of it at the last hop), shared by `share_budget` across its
    groups: every group keeps edges and the largest (hub) groups are truncated first.
    A group is a relation path from a topic, (topic, r1/dir, ..., rk/dir): PoG's
    clustered supernodes, so the answer's chain competes only with itself
    (`by_path=False`: the hop's (relation, direction) alone). A node belongs to the path
    of the edge that first reached it. Inside a group the k-th edges of every frontier
    node come before any node's (k+1)-th, so one hub cannot fill its group alone. Each
    hop reads at most max(READ_MIN, READ_FACTOR * max_triples) rows; a level with more
    rows can never fit the budget, and its hubs' rows are the ones left unread."""
    with graph.scratch.take() as sc:
        frontier = graph.walk_start(seeds, sc)
        # per walk, not pooled: 4 bytes per edge would stay resident (pages touched at random)
        edge_scratch = np.empty(graph.n_edges, dtype=np.int32)
        read_cap = max(READ_MIN, READ_FACTOR * max_triples)
        n_keys = 2 * max(len(graph.noise), int(graph.max_rel) + 1)
        # path group of each frontier node, and per level the groups' (parent, rel*2+out)
        fgroup = np.arange(len(frontier), dtype=np.int64) if by_path else None
        n_fgroups = len(frontier)
        paths: list[tuple[np.ndarray, np.ndarray]] = []
        found: list[np.ndarray] = []
        kept: list[tuple[np.ndarray, ...]] = []  # Expansion.rows of each batch found
        table = GroupTable(n_keys)
        res = Expansion(np.zeros(0, dtype=np.int64), False)
        count = 0
        for level in range(depth):
            if len(frontier) == 0:
                break
            dout, din = graph.degree(frontier)
            rows = int(dout.sum() + din.sum())
            pos, owner = capped_positions(graph, frontier, read_cap)
            ed = graph.gather(pos, owner)
            fresh = np.flatnonzero(sc.unseen(ed.eid))
            sel = fresh[first_index(ed.eid[fresh], edge_scratch)]
            key = ed.rel[sel] * 2 + ed.out[sel]
            bound = n_keys
            if fgroup is not None:
                key = fgroup[ed.owner[sel]] * n_keys + key
                bound = max(n_fgroups, 1) * n_keys
            gkeys, ginv, sizes = unique_inverse_counts(key, bound)
            remaining = max_triples - count
            if len(sel) > remaining or rows > len(pos):
                allot = remaining if level == depth - 1 else remaining // (depth - level)
                take = share_budget(sizes, allot)
                keep = _round_robin(ed.owner[sel], ginv, take)
                cut = np.flatnonzero(take < sizes)
                table.add(level + 1, gkeys[cut], take[cut], sizes[cut], paths)
                res.truncated = True
                res.unread_rows += rows - len(pos)
                res.unread_edges += len(sel) - int(keep.sum()) + rows - len(pos)
                if not res.cut_hop:
                    res.cut_hop = level + 1
                sel, ginv = sel[keep], ginv[keep]
            new = ed.eid[sel]
            sc.see(new)
            count += len(new)
            found.append(new)
            nb = ed.nbr[sel]
            kept.append((frontier[ed.owner[sel]], nb, ed.rel[sel], ~ed.out[sel]))
            fresh = np.flatnonzero(sc.unvisited(nb))
            fi = fresh[first_index(nb[fresh], sc.node_scratch)]
            frontier = nb[fi]
            sc.visit(frontier)
            if fgroup is not None:
                paths.append((gkeys // n_keys, gkeys % n_keys))
                fgroup = ginv[fi]
                n_fgroups = len(gkeys)
    res.eids = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    if kept:
        own, nbr, rel, inn = (np.concatenate(x) for x in zip(*kept, strict=True))
        res.rows = own, nbr, rel, inn
    else:
        res.rows = res.eids, res.eids, res.eids, np.zeros(0, dtype=bool)
    if res.truncated:
        res.reason = f"max_triples={max_triples} reached (relation-aware)"
        res.group_table = table
        res.left_out_relations = table.dropped_relations()
        res.left_out_exact = res.unread_rows == 0
    return res
