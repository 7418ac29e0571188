"""The clustered steps of a level of partial paths, expanding each DISTINCT set once.

Why (two-topic questions): a level holds up to `max_paths` partial paths, and
many of them end in the same set (different relation sequences reaching the same
entities). search.py's first version read every edge of every member of every partial
path's set, about 10^9 rows per 10M two-topic question. Two partial paths ending in the
same set differ only in the backtracking filter, which touches the keys reversing their
last hop. So here:

1. the sets of the level are deduplicated exactly (`canon`: a 64-bit set hash, equal
   hashes verified element by element, vectorised);
2. each distinct set is expanded once: its (key, reached set) entries, `keep` applied
   (distinct.py);
3. per partial path, the entries of its set are taken as they are, except the keys that
   reverse its last hop, whose reached set loses the members of the previous set
   (paths.py's `reached.difference_update(sets[-2])`), computed only for those keys;
   with Budget.revisit_when_empty, a step both exclusions empty gets its set back, the
   start included (the keys reaching the start are read from its own segments);
4. equal reached sets of one partial path form one step (relation clustering), found by
   exact set ids; steps are ordered by (partial path, primary key) as paths.py orders them.

The result is `_Steps`-shaped (same steps, same order, same groups), so
the callers and their bounds are unchanged; tests compare with the per-path version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.pog.arrays.csr import bits, pack
from kgreason.pog.arrays.distinct import KeptPrefix, _append, expand_distinct, keys_reaching
from kgreason.pog.arrays.kernels.sums import sets_holding
from kgreason.pog.arrays.segments import Expanded, Pool, expand_segments, segment_table
from kgreason.pog.arrays.segments import member_sorted as _member  # (levels, restrict too)
from kgreason.pog.arrays.set_ids import _hash_sets, canon, unique_sorted
from kgreason.pog.arrays.table import group_arrays

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import ArrayClusteredGraph
    from kgreason.pog.arrays.levels import _Level

#: partial paths per chunk (bounds the per-path entry arrays)
CHUNK_PATHS = 4096
#: partial paths per chunk of a segment search: smaller, so that once a level has made
#: max_paths partial paths the rest of it is read for its hits only (steps(hits_only))
SEGMENT_CHUNK_PATHS = 256


@dataclass
class _Steps:
    """The steps of a chunk of partial paths, in paths.py's order (by p, then primary key)."""

    codes: np.ndarray  # (p * k2 + key) * n + node of every row kept, sorted
    p: np.ndarray
    key: np.ndarray  # primary key code
    a: np.ndarray  # the reached set is nodes[a:b] (sorted)
    b: np.ndarray
    nodes: np.ndarray
    alts: dict[int, tuple[int, ...]]  # step index -> the other keys of its group
    has_t: np.ndarray | None = None  # segment search: the step's set holds the target
    h: np.ndarray | None = None  # each step's set hash (sum of the node hashes)

    def codes_of(self, i: int) -> tuple[int, ...]:
        """The key codes of step i's group, the primary first (per step; the search makes
        a chunk's groups in bulk with hop_maker.HopMaker.groups, tests compare the two)."""
        return (int(self.key[i]), *self.alts.get(i, ()))


def _rows(g: ArrayClusteredGraph, nodes: np.ndarray, owner: np.ndarray):
    """(owner, key code, neighbour) of every edge of `nodes`, both directions."""
    rank = g.rel_rank
    parts = []
    for ptr, rel, nbr, fwd in ((g.optr, g.orel, g.odst, 1), (g.iptr, g.irel, g.isrc, 0)):
        cnt = ptr[nodes + 1] - ptr[nodes]
        pos = ranges(ptr[nodes], cnt)
        parts.append((np.repeat(owner, cnt), rank[rel[pos]] * 2 + fwd, nbr[pos]))
    return tuple(np.concatenate(x) for x in zip(*parts, strict=True))


class LevelSteps:
    """The steps of every partial path of one level, chunk by chunk (`steps(p0, p1)`),
    each distinct set expanded once (on first use, so a bound that stops early also
    stops the reading). `t` >= 0: each step says whether its set holds t."""

    def __init__(
        self,
        g: ArrayClusteredGraph,
        lv: _Level,
        prev: _Level | None,
        keep: np.ndarray,
        hv: np.ndarray,
        t: int = -1,
        rows: int | None = None,
        kept: KeptPrefix | None = None,
    ):
        self.g, self.lv, self.prev, self.keep, self.hv, self.t = g, lv, prev, keep, hv, t
        self.kept = KeptPrefix() if kept is None else kept
        self.rows = rows  # the level's member rows, if known: the room its pool starts with
        self.k2 = 2 * max(len(g.rel_names), 1)
        off = lv.offsets()
        h = lv.h if lv.h is not None else _hash_sets(hv, lv.nodes, off[:-1], lv.lens)
        first = canon(lv.nodes, off[:-1], lv.lens, h)
        self.reps, self.u = np.unique(first, return_inverse=True)  # u by first appearance
        self.u = self.u.reshape(-1)
        self.base: Expanded | None = None
        self.pool: Pool | None = None  # the level's sets beyond the segment pool
        self.hit_base: Expanded | None = None  # steps(hits_only=True): entries holding t
        self.have_hits = 0
        self.have = 0  # distinct sets expanded so far
        self.tin = np.zeros(0, dtype=bool)
        self.bad_cum: np.ndarray | None = None
        self._flat: tuple[np.ndarray, np.ndarray] | None = None
        #: the free search's start s under Budget.revisit_when_empty (set by
        #: search._level_steps), else -1: a step the exclusions leave empty reaches what
        #: they excluded. Per entry: whether its key reached s before `keep` (has_s), and
        #: whether s was all it reached (only_s: the entry was added, its set {s} at s_at)
        self.revisit = -1
        self.has_s = self.only_s = np.zeros(0, dtype=bool)
        self.s_at = -1

    def _groups(self) -> tuple[np.ndarray, np.ndarray]:
        """The key codes of every partial path's last hop, flat (offsets, codes); once per
        level (table.group_arrays: arrays for the free search's Groups, C-level
        iteration for a list of tuples)."""
        if self._flat is None:
            self._flat = group_arrays(self.lv.groups)
        return self._flat

    def chunks(self) -> list[tuple[int, int]]:
        n_p, c = len(self.lv.lens), CHUNK_PATHS if self.t < 0 else SEGMENT_CHUNK_PATHS
        return [(p0, min(p0 + c, n_p)) for p0 in range(0, n_p, c)]

    def _prepare(self) -> tuple[Pool, np.ndarray]:
        """The level's pool, and the not-kept nodes over the segment pool (counted once)."""
        if self.pool is None or self.bad_cum is None:
            self.pool = Pool(segment_table(self.g).pool, self.rows)
            self.bad_cum = self.kept.of(self.g, self.keep)
        return self.pool, self.bad_cum

    def _ensure(self, upto: int) -> Expanded:
        if upto > self.have or self.base is None:
            lv = self.lv
            self._prepare()
            assert self.bad_cum is not None
            new = expand_distinct(
                self.g,
                lv.nodes,
                lv.offsets(),
                self.reps[self.have : upto],
                self.keep,
                self.hv,
                self.bad_cum,
                self.pool,
            )
            new.code = new.code + self.have * self.k2  # u numbering continues
            if self.revisit >= 0:
                new = self._with_start(new, upto)
            self.base = _append(self.base, new)
            if self.t >= 0:
                tin = sets_holding(new.pool, new.a, new.ln, self.t)
                self.tin = np.concatenate([self.tin, tin])
            self.have = upto
        return self.base

    def _with_start(self, new: Expanded, upto: int) -> Expanded:
        """`new` (the entries of sets have..upto) with has_s / only_s recorded, and an
        entry reaching {s} for each key by which a set reached s only (`keep` emptied it,
        so the expansion has none): s's own segments read backwards (keys_reaching) name
        the keys, without expanding the sets again with s kept."""
        s, k2, lv = self.revisit, self.k2, self.lv
        off, reps = lv.offsets(), self.reps[self.have : upto]
        lens = off[reps + 1] - off[reps]
        owner = np.repeat(np.arange(self.have, upto, dtype=np.int64), lens)
        to_s = keys_reaching(self.g, lv.nodes[ranges(off[reps], lens)], owner, s, k2)
        has_s = _member(to_s, new.code)
        only = to_s[~_member(new.code, to_s)]
        only_s = np.zeros(len(new.code), dtype=bool)
        if len(only):
            assert self.pool is not None
            if self.s_at < 0:
                self.s_at = self.pool.append(np.array([s], dtype=np.int64))
            one = np.ones(len(only), dtype=np.int64)
            code = np.concatenate([new.code, only])
            order = np.argsort(code, kind="stable")
            new = Expanded(
                code[order],
                np.concatenate([new.a, one * self.s_at])[order],
                np.concatenate([new.ln, one])[order],
                np.concatenate([new.h, np.full(len(only), self.hv[s], dtype=np.uint64)])[order],
                self.pool.view(),
                new.shared,
            )
            new.estart = np.searchsorted(new.code // k2, np.arange(self.have, upto + 1))
            has_s = np.concatenate([has_s, one > 0])[order]
            only_s = np.concatenate([only_s, one > 0])[order]
        self.has_s = np.concatenate([self.has_s, has_s])
        self.only_s = np.concatenate([self.only_s, only_s])
        return new

    def _ensure_hits(self, upto: int) -> Expanded:
        """Entries (u, key) whose reached set holds t, for the distinct sets below `upto`:
        those already expanded are taken from `base`; the others expand only the keys by
        which a member reaches t (found from t's own neighbours)."""
        if upto > self.have_hits or self.hit_base is None:
            pool, bad_cum = self._prepare()
            u0, k2 = self.have_hits, self.k2
            parts: list[Expanded] = []
            u_mid = min(max(self.have, u0), upto)  # [u0, u_mid) from base, the rest expanded
            if u_mid > u0 and self.base is not None:
                b = self.base
                e = np.arange(b.estart[u0], b.estart[u_mid])
                e = e[self.tin[e]]
                part = Expanded(b.code[e], b.a[e], b.ln[e], b.h[e], pool.view(), pool.shared)
                part.estart = np.searchsorted(part.code // k2, np.arange(u0, u_mid + 1))
                parts.append(part)
            if upto > u_mid:
                lv = self.lv
                off, reps = lv.offsets(), self.reps[u_mid:upto]
                lens = off[reps + 1] - off[reps]
                members = lv.nodes[ranges(off[reps], lens)]
                owner = np.repeat(np.arange(u_mid, upto, dtype=np.int64), lens)
                only = keys_reaching(self.g, members, owner, self.t, k2)
                part = expand_segments(
                    self.g, members, owner, self.keep, self.hv, bad_cum, pool, only=only
                )
                part.estart = np.searchsorted(part.code // k2, np.arange(u_mid, upto + 1))
                parts.append(part)
            for part in parts:
                self.hit_base = _append(self.hit_base, part)
            self.have_hits = upto
        assert self.hit_base is not None
        return self.hit_base

    def steps(self, p0: int, p1: int, hits_only: bool = False) -> _Steps:
        """The steps of partial paths p0..p1-1; `hits_only` (segment search): only those
        whose set holds t, each with its whole set and group (what a level needs once its
        partial-path bound is reached: the rest would be dropped)."""
        lv, k2, n = self.lv, self.k2, self.g.n
        pp = np.arange(p0, p1, dtype=np.int64)
        uu = self.u[p0:p1]
        upto = int(uu.max()) + 1 if len(uu) else self.have
        if hits_only:
            base = self._ensure_hits(upto)
            tin = np.ones(len(base.a), dtype=bool)
        else:
            base = self._ensure(upto)
            tin = self.tin
        cnt = base.estart[uu + 1] - base.estart[uu]
        e_sid = ranges(base.estart[uu], cnt)
        e_p = np.repeat(pp, cnt)
        e_key = base.code[e_sid] % k2
        s_a, s_ln, s_h, pool = base.a, base.ln, base.h, base.pool
        alive = np.ones(len(e_sid), dtype=bool)
        if self.prev is not None and len(e_sid):  # no immediate backtracking (only these keys)
            g_off, g_flat = self._groups()
            bp = np.repeat(pp, np.diff(g_off[p0 : p1 + 1]))
            bkey = g_flat[g_off[p0] : g_off[p1]] ^ 1
            ecode = e_p * k2 + e_key  # sorted: p ascending, keys ascending within a set
            want = bp * k2 + bkey
            at = np.minimum(np.searchsorted(ecode, want), len(ecode) - 1)
            hit = ecode[at] == want
            at, bp = at[hit], bp[hit]
            if self.revisit >= 0:  # a step that reached s only reaches {s}, whatever prev
                other = ~self.only_s[e_sid[at]]
                at, bp = at[other], bp[other]
            sid = e_sid[at]
            mem = pool[ranges(s_a[sid], s_ln[sid])]
            pair = np.repeat(np.arange(len(at)), s_ln[sid])
            inprev = self.prev.contains(lv.parent[bp][pair], mem, n)
            removed = np.bincount(pair, weights=inprev, minlength=len(at)).astype(np.int64)
            ch = removed > 0
            back = np.zeros(len(at), dtype=bool)  # emptied, so s is put back in
            if self.revisit >= 0:  # emptied: the set before both exclusions
                emptied = ch & (removed == s_ln[sid])
                ch &= ~emptied | self.has_s[sid]
                back = emptied & ch
            if ch.any():
                keepm = (~inprev | back[pair]) & ch[pair]
                m_pool = mem[keepm]
                m_ln = np.where(back, s_ln[sid] + 1, s_ln[sid] - removed)[ch]
                if back.any():  # s joins those sets, in order
                    m_own = np.concatenate([pair[keepm], np.flatnonzero(back)])
                    m_pool = np.concatenate([m_pool, np.full(int(back.sum()), self.revisit)])
                    m_pool = m_pool[np.lexsort((m_pool, m_own))]
                m_rel = np.concatenate([[0], np.cumsum(m_ln)[:-1]]).astype(np.int64)
                assert self.pool is not None
                m_a = m_rel + self.pool.append(m_pool)
                m_sid = len(s_a) + np.arange(int(ch.sum()), dtype=np.int64)
                pool = self.pool.view()
                s_a = np.concatenate([s_a, m_a])
                s_ln = np.concatenate([s_ln, m_ln])
                s_h = np.concatenate([s_h, _hash_sets(self.hv, m_pool, m_rel, m_ln)])
                if self.t >= 0:
                    tin = np.concatenate([tin, sets_holding(pool, m_a, m_ln, self.t)])
                e_sid[at[ch]] = m_sid
                alive[at[ch][m_ln == 0]] = False
        e_sid, e_p, e_key = e_sid[alive], e_p[alive], e_key[alive]
        ref = unique_sorted(e_sid)
        cid = ref[canon(pool, s_a[ref], s_ln[ref], s_h[ref])]
        e_cid = cid[np.searchsorted(ref, e_sid)]
        order = _order3(e_p - p0, e_cid, e_key, (bits(p1 - p0), bits(len(s_a)), bits(k2)))
        sp, sc, sk = e_p[order], e_cid[order], e_key[order]
        new = np.ones(len(sp), dtype=bool)
        new[1:] = (sp[1:] != sp[:-1]) | (sc[1:] != sc[:-1])
        heads = np.flatnonzero(new)
        size = np.diff(np.append(heads, len(sp)))
        step_order = _order3(sp[heads] - p0, sk[heads], None, (bits(p1 - p0), bits(k2), 0))
        h_sorted = heads[step_order]
        alts: dict[int, tuple[int, ...]] = {}
        multi = np.flatnonzero(size[step_order] > 1)
        if len(multi):
            sk_l = sk.tolist()
            for i, r0, sz in zip(
                multi.tolist(),
                h_sorted[multi].tolist(),
                size[step_order][multi].tolist(),
                strict=True,
            ):
                alts[i] = tuple(sk_l[r0 + 1 : r0 + sz])
        c = sc[h_sorted]
        st = _Steps(
            np.zeros(0, dtype=np.int64),
            sp[h_sorted],
            sk[h_sorted],
            s_a[c],
            s_a[c] + s_ln[c],
            pool,
            alts,
        )
        st.has_t = tin[c] if self.t >= 0 else np.zeros(len(c), dtype=bool)
        st.h = s_h[c]
        return st


def _order3(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, w: tuple[int, int, int]):
    """np.lexsort((c, b, a)) for distinct (a, b, c) rows of non-negative ints of widths w:
    one stable argsort of packed codes (a comes ascending, so timsort finds long runs);
    lexsort's three passes measured ~3x slower."""
    if sum(w) > 62:
        return np.lexsort((b, a)) if c is None else np.lexsort((c, b, a))
    fields = (a, b) if c is None else (a, b, c)
    return np.argsort(pack(fields, w[: len(fields)]), kind="stable")
