"""Prefix (type-ahead) search over a store's normalised names.

Stores built with the sorted-name index (`norms.order`: norm ids in string order) answer
by bisection (`kg.ranking.from_sorted`, which MemoryKG uses too): ~2 log2(n) string reads
find the block of names starting with the text, and the shortest `k` of that block are
picked from the stored lengths (integers; no string of the block is read). Older stores
have no such index: a small one sorts its names once in memory (exact, like the sorted
index); a large one takes the names holding every trigram of
" " + text from the trigram index and checks the shortest `PREFIX_VERIFY` of them, so a
one-letter query finds nothing there and ties at the cut are broken by norm id, not name
(rebuild the store for the exact answer).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kgreason.kg.ranking import shortest

#: older large stores: at most this many trigram candidates are read and checked per query
PREFIX_VERIFY = 4_096


def query_trigrams(q: str) -> np.ndarray:
    """The byte trigrams every name starting with `q` holds (those of " " + q), as the
    24-bit codes of the store's trigram index."""
    enc = (" " + q).encode()
    codes = [(enc[i] << 16) | (enc[i + 1] << 8) | enc[i + 2] for i in range(len(enc) - 2)]
    return np.unique(np.asarray(codes, dtype=np.uint32))


def from_trigrams(
    q: str,
    tri: tuple[np.ndarray, np.ndarray, np.ndarray],
    names: Callable[[list[int]], list[str]],
    lens: np.ndarray,
    k: int,
) -> list[int]:
    """As `kg.ranking.from_sorted`, for stores without the sorted index: candidates from the trigram
    index (`tri` = codes, indptr, owners), the shortest `PREFIX_VERIFY` checked."""
    codes = query_trigrams(q)
    tri_codes, tri_ptr, tri_val = tri
    if len(codes) == 0:
        return []
    pos = np.searchsorted(tri_codes, codes)
    if (pos >= len(tri_codes)).any() or (np.asarray(tri_codes[pos]) != codes).any():
        return []  # a trigram no name has: no name starts with q
    starts, ends = np.asarray(tri_ptr[pos]), np.asarray(tri_ptr[pos + 1])
    by_size = np.argsort(ends - starts, kind="stable")
    cand = np.asarray(tri_val[starts[by_size[0]] : ends[by_size[0]]], dtype=np.int64)
    cand = cand[np.asarray(lens[cand]) > len(q)]
    for j in by_size[1:]:  # posting lists are sorted: probe them, rarest first
        if len(cand) == 0:
            return []
        posting = tri_val[starts[j] : ends[j]]
        at = np.minimum(np.searchsorted(posting, cand), len(posting) - 1)
        cand = cand[np.asarray(posting[at]) == cand]
    first = np.asarray(shortest(cand, np.asarray(lens[cand]), PREFIX_VERIFY), dtype=np.int64)
    ok = [
        (len(s), s, int(i)) for i, s in zip(first.tolist(), names(first.tolist()), strict=True)
        if s.startswith(q)
    ]  # fmt: skip
    return [i for _, _, i in sorted(ok)[:k]]
