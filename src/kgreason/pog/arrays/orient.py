"""order_free's orientation, dedup and cut of LazyHop paths on arrays (the array form's
`merge_orders`, pog/backend.py).

Why: a two-topic question at 10M triples finds thousands of paths per topic order, and
order_free.oriented_key built two tuples of (bytes, code, bytes) per path in Python to
orient it, key it and sort the keys (~25 ms a question, ~3 µs a path). Here the sets of all
paths are ranked once by content (a NameSet's key() is its ids as big-endian bytes, so
ranking the distinct sets by key() and giving equal keys one rank preserves every
comparison and equality), and each path of L hops becomes one row of 3L integers
(src rank, code, dst rank per hop): orienting, deduplicating and sorting are row
comparisons and one lexsort per length.

`choose(paths, ranks, max_paths)` gives exactly what the per-path loop gives (oriented_key
per path, the first path of each key kept, keys sorted by (length, key), the first
max_paths): `choose_lazy` runs that loop below BULK_PATHS paths, and tests compare both
with order_free.merge_orders' reference. Only the paths kept are built, the reversed ones
in one bulk call (`oriented_paths`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate, chain, pairwise, repeat
from operator import attrgetter, ne

import numpy as np

from kgreason.pog.arrays.hop_maker import HopMaker, make_paths
from kgreason.pog.arrays.hops import id_signature_of
from kgreason.pog.clustering import Key
from kgreason.pog.types import Hop, ReasoningPath

#: paths from which choose_lazy orients and dedups them on arrays (choose)
BULK_PATHS = 64

_src, _dst, _code, _ids = (attrgetter(a) for a in ("_src", "_dst", "code", "ids"))


def set_ranks(sets: list, topics: dict[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For NameSets: (content rank of each distinct object, its topic place or -1, each
    set's distinct object). Equal ids -> equal rank; ranks are ordered like the sets'
    key() (their id sequences, lexicographically). A set's topic place is topics[id] for a
    one-member set {id} (its key is that id's 8 bytes), else -1."""
    ids = np.fromiter(map(id, sets), dtype=np.int64, count=len(sets))
    _, first, inv = np.unique(ids, return_index=True, return_inverse=True)
    keys = _keys([sets[j] for j in first.tolist()])
    one = {np.array([t], dtype=">i8").tobytes(): r for t, r in topics.items()}
    topic = np.fromiter(map(one.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
    order = sorted(range(len(keys)), key=keys.__getitem__)
    sk = [keys[j] for j in order]
    step = np.zeros(len(sk), dtype=np.int64)  # 1 where a sorted key differs from the last
    step[1:] = np.fromiter(map(ne, sk[1:], sk[:-1]), dtype=bool, count=max(len(sk) - 1, 0))
    rank = np.empty(len(keys), dtype=np.int64)
    rank[np.array(order, dtype=np.int64)] = np.cumsum(step)
    return rank, topic, inv.reshape(-1)


def _keys(sets: list) -> list[bytes]:
    """NameSet.key() of each set (ids as big-endian int64 bytes), from one conversion of
    all their ids (a key() call per set costs ~3x)."""
    ids = list(map(_ids, sets))
    if not ids:
        return []
    off = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, ids), dtype=np.int64, count=len(ids)), out=off[1:])
    buf = np.concatenate(ids).astype(">i8").tobytes()
    b = (off * 8).tolist()
    return [buf[x:y] for x, y in pairwise(b)]


def _less(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise lexicographic comparison of equally shaped int arrays: (x < y, x > y)."""
    diff = x != y
    has = diff.any(axis=1)
    col = diff.argmax(axis=1)
    r = np.arange(len(x))
    lt = has & (x[r, col] < y[r, col])
    return lt, has & ~lt


def _topic_seq(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the topic ranks (entries >= 0) in order, padded with -1 after them, and the
    same entries reversed (padded alike): orient's ranks(seq) and ranks(seq[::-1])."""
    w = t.shape[1]
    pos = np.argsort(t < 0, axis=1, kind="stable")  # topics first, in order
    v = np.take_along_axis(t, pos, axis=1)
    m = (t >= 0).sum(axis=1)
    j = np.arange(w)
    src = m[:, None] - 1 - j[None, :]
    rv = np.where(src >= 0, np.take_along_axis(v, np.maximum(src, 0), axis=1), -1)
    return v, rv


def choose(
    paths: Sequence[tuple[Hop, ...]], ranks: dict[int, int], max_paths: int
) -> tuple[list[tuple[tuple[Hop, ...], bool]], int]:
    """For LazyHop paths of one graph, in the order found: ((hops, reversed) of the kept
    paths, sorted and cut like order_free_paths does, and the number of distinct keys).
    `ranks`: local id of each topic -> its place in the reference order."""
    if not paths:
        return [], 0
    lens = np.fromiter(map(len, paths), dtype=np.int64, count=len(paths))
    hs = list(chain.from_iterable(paths))
    # the search shares hop objects between paths: read each distinct hop once
    hid = np.fromiter(map(id, hs), dtype=np.int64, count=len(hs))
    _, h_first, h_inv = np.unique(hid, return_index=True, return_inverse=True)
    uh = [hs[i] for i in h_first.tolist()]
    n_u = len(uh)
    rank_d, topic, inv = set_ranks([*map(_src, uh), *map(_dst, uh)], ranks)
    h_inv = h_inv.reshape(-1)
    rank, tpos = rank_d[inv], topic[inv]
    rs, rd, ts, td = (x[h_inv] for x in (rank[:n_u], rank[n_u:], tpos[:n_u], tpos[n_u:]))
    code = np.fromiter(map(_code, uh), dtype=np.int64, count=n_u)[h_inv]
    off = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    picked: list[np.ndarray] = []
    flags: list[np.ndarray] = []
    n_found = 0
    for length in np.unique(lens).tolist():
        rows = np.flatnonzero(lens == length)
        if length == 0:
            picked.append(rows[:1])
            flags.append(np.zeros(1, dtype=bool))
            n_found += 1
            continue
        at = off[rows][:, None] + np.arange(length)[None, :]
        s_r, c, d_r = rs[at], code[at], rd[at]
        fwd = np.empty((len(rows), 3 * length), dtype=np.int64)
        fwd[:, 0::3], fwd[:, 1::3], fwd[:, 2::3] = s_r, c, d_r
        back = np.empty_like(fwd)
        back[:, 0::3], back[:, 1::3], back[:, 2::3] = d_r[:, ::-1], c[:, ::-1] ^ 1, s_r[:, ::-1]
        v, rv = _topic_seq(np.concatenate([ts[at[:, :1]], td[at]], axis=1))
        t_lt, t_gt = _less(v, rv)
        _, b_lt_f = _less(fwd, back)  # back < fwd
        rev = t_gt | (~t_lt & b_lt_f)
        key = np.where(rev[:, None], back, fwd)
        # sorted by key, the first found first among equal keys (lexsort is stable)
        order = np.lexsort(key.T[::-1])
        k = key[order]
        new = np.ones(len(k), dtype=bool)
        new[1:] = (k[1:] != k[:-1]).any(axis=1)
        keep = order[new]
        n_found += len(keep)
        picked.append(rows[keep])
        flags.append(rev[keep])
    idx = np.concatenate(picked)[:max_paths].tolist()
    rev_l = np.concatenate(flags)[:max_paths].tolist()
    return [(paths[i], r) for i, r in zip(idx, rev_l, strict=True)], n_found


def oriented_key(hops: Sequence[Hop], ranks: dict[int, int]) -> tuple[tuple, bool]:
    """order_free.orient for LazyHops of one graph, without building either path:
    (id_signature of the path orient keeps, True when that is the reversed path).
    `ranks`: the local id of each topic -> its place in the reference order."""
    if not hops:
        return (), False
    seq = [hops[0]._src, *(h._dst for h in hops)]  # type: ignore[attr-defined]
    fwd = tuple(r for s in seq if len(s.ids) == 1 and (r := ranks.get(int(s.ids[0]))) is not None)
    back = fwd[::-1]  # the ranks of the reversed path's sets
    if fwd < back:
        return id_signature_of(hops), False
    if back < fwd:
        return _reversed_signature(hops), True
    f, b = id_signature_of(hops), _reversed_signature(hops)
    return (f, False) if f <= b else (b, True)


def choose_lazy(
    paths: Sequence[tuple[Hop, ...]],
    ranks: dict[int, int],
    max_paths: int,
    bulk: bool | None = None,
) -> tuple[list[tuple[tuple[Hop, ...], bool]], int]:
    """oriented_key for each LazyHop path (in the order found), the first path of each key
    kept, keys sorted by (length, key), the first max_paths: ((hops, reversed) of those,
    the number of distinct keys). On arrays (orient.choose) from BULK_PATHS paths, per path
    below (the reference); `bulk` forces one (tests)."""
    if bulk if bulk is not None else len(paths) >= BULK_PATHS:
        return choose(paths, ranks, max_paths)
    lazy: dict[tuple, tuple[tuple[Hop, ...], bool]] = {}
    for hops in paths:
        key, rev = oriented_key(hops, ranks)
        if key not in lazy:
            lazy[key] = (hops, rev)
    return [lazy[k] for k in sorted(lazy, key=lambda k: (len(k), k))[:max_paths]], len(lazy)


def _reversed_signature(hops: Sequence[Hop]) -> tuple:
    """id_signature of order_free.reverse_path's result (LazyHop.reversed: sets swapped,
    code ^ 1), without making it."""
    return tuple((h._dst.key(), h.code ^ 1, h._src.key()) for h in reversed(hops))  # type: ignore[attr-defined]


def oriented_paths(
    chosen: Sequence[tuple[tuple[Hop, ...], bool]], ref: tuple[str, ...]
) -> list[ReasoningPath]:
    """ReasoningPath(hops, ref), or order_free.reverse_path of it where the flag is set,
    for each (LazyHop path, reversed): each distinct hop object is reversed once (the
    search shares hops between paths), all in one bulk call, and the reversed paths' hop
    tuples are cut from one flat list."""
    back = tuple(reversed(ref))
    fwd = [hops for hops, rev in chosen if not rev]
    bwd_in = [hops for hops, rev in chosen if rev]
    flat = list(chain.from_iterable(map(reversed, bwd_in)))  # each path's hops reversed
    hid = np.fromiter(map(id, flat), dtype=np.int64, count=len(flat))
    _, first, inv = np.unique(hid, return_index=True, return_inverse=True)
    flip = [flat[i] for i in first.tolist()]
    rkeys: dict[int, tuple[tuple[Key, ...], tuple[Key, ...]]] = {}  # id(keys) -> (keys, flipped)
    flipped = []
    for ks in map(_keys_of, flip):
        got = rkeys.get(id(ks))
        if got is None:
            got = rkeys[id(ks)] = (ks, tuple((r, not f) for r, f in ks))
        flipped.append(got[1])
    made = HopMaker.hops(
        list(map(_dst_of, flip)),
        flipped,
        list(map(_src_of, flip)),
        [c ^ 1 for c in map(_code_of, flip)],
    )
    per_hop = np.fromiter(made, dtype=object, count=len(made))[inv.reshape(-1)].tolist()
    cut = [0, *accumulate(map(len, bwd_in))]
    bwd = [tuple(per_hop[a:b]) for a, b in pairwise(cut)]
    it_f, it_b = iter(make_paths(fwd, ref)), iter(make_paths(bwd, back))
    return [next(it_b) if rev else next(it_f) for _, rev in chosen]


_src_of, _dst_of, _keys_of, _code_of = (attrgetter(a) for a in ("_src", "_dst", "_keys", "code"))
