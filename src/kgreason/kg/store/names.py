"""Node identifiers, display names and entity search over the store's string tables.

`keys` are the node identifiers (what the pipelines pass around), `labels` the searchable
names (a node's name, or its key when it has none: the same rule as MemoryKG). Lookups go
through stable 64-bit hashes sorted for `searchsorted`, verified against the strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from kgreason.kg.base import UNNAMED, EntityMatch
from kgreason.kg.ranking import (
    FUZZY_MIN_RATIO,
    from_sorted,
    fuzzy_scores,
    normalize_name,
    prefix_score,
)
from kgreason.kg.store import prefix as prefix_search
from kgreason.kg.store.build_index import byte_trigrams, ranges
from kgreason.kg.store.format import HashIndex, Manifest, StringTable, load_array
from kgreason.kg.store.materialize import string_ranks

#: Up to this many distinct normalised names, fuzzy search scores every name (and gives
#: exactly MemoryKG's answer); above it, only the best trigram candidates are scored.
EXHAUSTIVE_FUZZY = 50_000
TRIGRAM_CANDIDATES = 2_000
FUZZY_CUTOFF = FUZZY_MIN_RATIO


def is_identity(key_rank: np.ndarray, chunk: int = 1 << 20) -> bool:
    """Whether keys.rank is 0, 1, 2, ...: node ids in key order (stores built since
    kg/store/build._key_order). Checked in chunks (a store built before fails on its first)."""
    for a in range(0, len(key_rank), chunk):
        part = key_rank[a : a + chunk]
        if not np.array_equal(part, np.arange(a, a + len(part), dtype=part.dtype)):
            return False
    return True


class NameIndex:
    def __init__(self, directory: Path, manifest: Manifest):
        d = directory
        self.keys = StringTable.open(d, "keys")
        #: optional (stores built before it existed lack it): rank of each key in string order
        self.key_rank = load_array(d, "keys.rank") if (d / "keys.rank.npy").is_file() else None
        self.key_index = HashIndex.open(d, "keys")
        if manifest.has_names:
            self.labels = StringTable.open(d, "labels")
            self.label_index = HashIndex.open(d, "labels")
        else:
            self.labels, self.label_index = self.keys, self.key_index
        self.unnamed = load_array(d, "unnamed")
        self.norms = StringTable.open(d, "norms")
        self.norm_index = HashIndex.open(d, "norms")
        self.norm_ptr = load_array(d, "norm_nodes.indptr")
        self.norm_val = load_array(d, "norm_nodes.val")
        self.norm_len = load_array(d, "norms.len")
        self.norm_ntri = load_array(d, "norms.ntri")
        self.tri_codes = load_array(d, "tri.codes")
        self.tri_ptr = load_array(d, "tri.indptr")
        self.tri_val = load_array(d, "tri.val")
        #: optional (stores built before it lack it): norm ids in string order, for prefix search
        self.norm_order = (
            load_array(d, "norms.order") if (d / "norms.order.npy").is_file() else None
        )
        #: every normalised name, read on the first exhaustive fuzzy search
        self._all_norms: list[str] | None = None

    def lookup(self, keys: Sequence[str]) -> np.ndarray:
        """Node id of each key, -1 where the store has no such node. The usual single
        candidate per key is verified for the whole batch at once."""
        keys = list(keys)
        out = np.full(len(keys), -1, dtype=np.int64)
        if not keys:
            return out
        lo, hi = self.key_index.runs(keys)
        one = np.flatnonzero(hi - lo == 1)
        cand = self.key_index.value(lo[one])
        for i, c, s in zip(one.tolist(), cand.tolist(), self.keys.many(cand), strict=True):
            if s == keys[i]:
                out[i] = c
        for i in np.flatnonzero(hi - lo > 1).tolist():  # hash collisions
            for c in self.key_index.value(np.arange(lo[i], hi[i])).tolist():
                if self.keys[c] == keys[i]:
                    out[i] = c
                    break
        return out

    @cached_property
    def key_ordered(self) -> bool:
        """Whether node ids are in key order (`keys.rank` the identity), read once: what
        PoG's clustering loop (kernels/build._cluster_ordered) and `kgreason doctor` ask."""
        return self.key_rank is not None and is_identity(self.key_rank)

    def key_order(self, nodes: np.ndarray, keys: list[str]) -> np.ndarray:
        """Rank of each of these distinct nodes among them by key (string order): from the
        stored `keys.rank` (integers), or by sorting `keys` for stores built without it."""
        if self.key_rank is None:
            return string_ranks(keys)
        rank = np.empty(len(nodes), dtype=np.int64)
        rank[np.argsort(self.key_rank[nodes])] = np.arange(len(nodes))
        return rank

    def display(self, nodes: Sequence[int] | np.ndarray) -> list[str]:
        """D(.): the name, or UNNAMED for unnamed nodes."""
        nodes = np.asarray(nodes, dtype=np.int64)
        labels = self.labels.many(nodes)
        flags = self.unnamed[nodes].tolist()
        return [UNNAMED if f else s for s, f in zip(labels, flags, strict=True)]

    def _matches(self, node_ids: Sequence[int], kind: str, score: float) -> list[EntityMatch]:
        ids = list(node_ids)
        rows = sorted(zip(self.keys.many(ids), self.labels.many(ids), strict=True))
        return [EntityMatch(k, lab, kind, score) for k, lab in rows]

    def search(
        self, text: str, limit: int, fuzzy: bool, *, prefix: bool = False
    ) -> list[EntityMatch]:
        """Exact name, then normalised name, then (if `prefix`) names starting with the
        text, shortest first, then fuzzy (similarity >= 0.6), best first; ties broken by
        id, as MemoryKG does."""
        exact = [
            c for c in self.label_index.candidates([text])[0].tolist() if self.labels[c] == text
        ]
        out = self._matches(exact, "exact", 1.0)
        seen = set(exact)
        q = normalize_name(text)
        nid = self._norm_id(q)
        if nid >= 0:
            same = [n for n in self._norm_nodes(nid) if n not in seen]
            out += self._matches(same, "normalized", 0.99)
            seen.update(same)
        if prefix and q and len(out) < limit:
            for n in self._prefix_norms(q, limit - len(out)):
                nodes = self._norm_nodes(n)
                out += self._matches(nodes, "prefix", prefix_score(q, self.norms[n]))
                seen.update(nodes)
        if fuzzy and len(out) < limit:
            scored: list[tuple[float, str, str]] = []
            for cand, ratio in self._fuzzy_norms(q):
                nodes = [n for n in self._norm_nodes(cand) if n not in seen]
                for k, lab in zip(self.keys.many(nodes), self.labels.many(nodes), strict=True):
                    scored.append((ratio, k, lab))
            scored.sort(key=lambda x: (-x[0], x[1]))
            out += [EntityMatch(k, lab, "fuzzy", round(r, 4)) for r, k, lab in scored[:limit]]
        return out[:limit]

    def _prefix_norms(self, q: str, k: int) -> list[int]:
        """Norm ids of the `k` shortest names starting with `q` (see prefix.py): from the
        sorted-name index (kg.ranking.from_sorted), or for older stores an order sorted once in memory (small
        stores) or the trigram index (large ones)."""
        order = self.norm_order
        if order is None and len(self.norms) <= EXHAUSTIVE_FUZZY:
            if self._all_norms is None:
                self._all_norms = self.norms.all()
            names = self._all_norms
            order = self.norm_order = np.asarray(
                sorted(range(len(names)), key=names.__getitem__), dtype=np.int64
            )
        if order is not None:
            return from_sorted(q, order, self.norms.__getitem__, self.norm_len, k)
        tri = (self.tri_codes, self.tri_ptr, self.tri_val)
        return prefix_search.from_trigrams(q, tri, self.norms.many, self.norm_len, k)

    def _norm_id(self, q: str) -> int:
        for c in self.norm_index.candidates([q])[0].tolist():
            if self.norms[c] == q:
                return c
        return -1

    def _norm_nodes(self, nid: int) -> list[int]:
        return self.norm_val[self.norm_ptr[nid] : self.norm_ptr[nid + 1]].tolist()

    def _fuzzy_norms(self, q: str) -> list[tuple[int, float]]:
        """(norm id, similarity) of every normalised name within FUZZY_CUTOFF of `q`: all
        names when there are few enough (MemoryKG's answer), else the best trigram ones."""
        if len(self.norms) <= EXHAUSTIVE_FUZZY:
            if self._all_norms is None:
                self._all_norms = self.norms.all()
            return [h for h in fuzzy_scores(q, self._all_norms, cutoff=FUZZY_CUTOFF) if h[1] < 1]
        cands = self._trigram_candidates(q).tolist()
        strings = self.norms.many(cands)
        return [(cands[i], r) for i, r in fuzzy_scores(q, strings, cutoff=FUZZY_CUTOFF) if r < 1]

    def _trigram_candidates(self, q: str) -> np.ndarray:
        codes = np.unique(byte_trigrams([q])[0])
        n_q = len(codes)
        pos = np.searchsorted(self.tri_codes, codes)
        ok = pos < len(self.tri_codes)
        pos, codes = pos[ok], codes[ok]
        pos = pos[np.asarray(self.tri_codes[pos]) == codes]
        if len(pos) == 0:
            return np.zeros(0, dtype=np.int64)
        starts = np.asarray(self.tri_ptr[pos])
        ends = np.asarray(self.tri_ptr[pos + 1])
        owners = np.asarray(self.tri_val[ranges(starts, ends - starts)])
        nz, shared = np.unique(owners, return_counts=True)
        score = shared / (n_q + np.asarray(self.norm_ntri[nz]) - shared)
        if len(nz) > TRIGRAM_CANDIDATES:
            top = np.argpartition(-score, TRIGRAM_CANDIDATES)[:TRIGRAM_CANDIDATES]
            nz = nz[top]
        return nz
