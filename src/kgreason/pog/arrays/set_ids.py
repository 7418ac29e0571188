"""Exact set identity for the path search: which of many sorted sets are equal.

Why apart from steps: the level expansion, `restrict` and the small levels' expansion
all deduplicate sets the same way: a 64-bit set hash (a sum of random node hashes), sets
sharing a (hash, size) key compared element by element (kernels/canon), so the answer is
exact even under hash collisions.
"""

from __future__ import annotations

import numpy as np

from kgreason.pog.arrays.csr import distinct_sorted
from kgreason.pog.arrays.kernels.canon import differ


def unique_sorted(x: np.ndarray) -> np.ndarray:
    """np.unique(x) for a 1-d int array, by sorting: numpy 2.x's np.unique hashes, which
    measured 25x slower than a sort on 15M int64 codes (same output: sorted, distinct).
    The stable sort (timsort): every caller's codes come grouped by their high part (owner
    first) with sorted runs inside, where it measured 11x faster than the default sort
    (restrict at 10M: 1.5M codes, 83 -> 7.4 ms) and ~15% slower on random codes."""
    return distinct_sorted(np.sort(x, kind="stable"))


#: mixes a set's size into its hash, so one sort key orders by (hash, size)
_MIX = np.uint64(0x9E3779B97F4A7C15)


def canon(nodes: np.ndarray, start: np.ndarray, lens: np.ndarray, h: np.ndarray) -> np.ndarray:
    """For each set nodes[start:start+len] (each sorted), the index of the first set equal
    to it. Sets sharing a hash-and-size key are compared element by element (unless they
    are the same range of `nodes`), so the result is exact. One stable argsort of the key
    replaced a three-key lexsort (2.6x faster at 10M, same result)."""
    m = len(start)
    first = np.arange(m, dtype=np.int64)
    if m < 2:
        return first
    key = h ^ (lens.astype(np.uint64) * _MIX)
    order = np.argsort(key, kind="stable")  # equal keys in index order: a run's head is first
    ks = key[order]
    same = ks[1:] == ks[:-1]
    if not same.any():
        return first
    run = np.concatenate([[0], np.cumsum(~same)])
    head = order[np.flatnonzero(np.diff(run, prepend=-1))][run]  # run head of each (sorted)
    cand = np.flatnonzero(head != order)  # positions (sorted) whose head is another set
    i, j = order[cand], head[cand]
    bad = lens[i] != lens[j]  # a key collision of two sizes
    cmp = np.flatnonzero(~bad & (start[i] != start[j]))  # one range of nodes is one set
    if len(cmp):
        bad[cmp] = differ(nodes, start, i[cmp], j[cmp], lens[i[cmp]])
    first[i[~bad]] = j[~bad]
    if bad.any():  # a true hash collision (not seen in practice): settle those runs exactly
        for r in np.unique(run[cand[bad]]).tolist():
            seen: dict[bytes, int] = {}
            for x in order[run == r].tolist():
                s0 = int(start[x])
                first[x] = seen.setdefault(nodes[s0 : s0 + int(lens[x])].tobytes(), x)
    return first


def _hash_sets(hv: np.ndarray, nodes: np.ndarray, start: np.ndarray, lens: np.ndarray):
    out = np.zeros(len(start), dtype=np.uint64)
    nz = lens > 0
    if nz.any():
        out[nz] = np.add.reduceat(hv[nodes], start[nz])[: int(nz.sum())]
    return out
