"""Entity-name normalisation and ranking, shared by every KG backend and the topic linker.

ONE normaliser (`normalize_name`): diacritics (NFKD, combining marks dropped), case,
underscores, punctuation and spacing. The store's name index (built with it), MemoryKG, the
SPARQL search and PoG's linker all use it, so "tigres uanl", "Tigres UANL" and "Tigres_UANL"
are the same name everywhere, and a match that differs only in this form counts as exact.

One ranking so that backends agree: exact name first, then the same normalised name, then
(only when asked, `prefix=True`: type-ahead search) names the normalised text is a prefix
of, shortest first (`from_sorted`, which stores use too), then fuzzy matches (rapidfuzz's normalised Indel similarity `fuzz.ratio`, the same measure as
difflib's ratio computed exactly) >= `FUZZY_MIN_RATIO` against the normalised names, best
first; ties are broken by entity id.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from rapidfuzz import fuzz, process

from kgreason.kg.base import EntityMatch

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)

FUZZY_MIN_RATIO = 0.6
#: apostrophes vanish ("Schindler's" = "Schindlers"); other punctuation separates words
_APOSTROPHES = frozenset("'\u2018\u2019\u02bc`\u00b4")


#: the same rules for ASCII text as one str.translate (no decomposition, no combining marks)
_ASCII_TABLE = {
    i: (None if chr(i) in _APOSTROPHES else " ")
    for i in range(128)
    if chr(i) in _APOSTROPHES or chr(i) == "_" or unicodedata.category(chr(i)).startswith("P")
}


def normalize_name(text: str) -> str:
    """Case-, diacritic-, underscore-, punctuation- and spacing-insensitive form of a name.

    A name made only of punctuation ("!!!") keeps its punctuation, so it is not confused
    with the empty string. ASCII names (most of a KG's) take one C-level translate, the
    same result as the per-character path (tests/kg/test_normalize_ascii.py)."""
    if text.isascii():
        out = " ".join(text.translate(_ASCII_TABLE).lower().split())
        return out or " ".join(text.lower().replace("_", " ").split())
    decomposed = unicodedata.normalize("NFKD", text)
    chars: list[str] = []
    for c in decomposed:
        if unicodedata.combining(c) or c in _APOSTROPHES:
            continue
        chars.append(" " if c == "_" or unicodedata.category(c).startswith("P") else c)
    out = " ".join("".join(chars).casefold().split())
    if not out:
        out = " ".join(decomposed.casefold().replace("_", " ").split())
    return out


def fuzzy_scores(
    q_norm: str, norms: Sequence[str], *, cutoff: float = FUZZY_MIN_RATIO, limit: int | None = None
) -> list[tuple[int, float]]:
    """(index into `norms`, similarity) of the names scoring >= cutoff, best first (ties by
    index). rapidfuzz's C scorer with a cutoff: fast enough to scan ~10^5 names per query."""
    hits = process.extract(q_norm, norms, scorer=fuzz.ratio, score_cutoff=cutoff * 100, limit=limit)
    out = [(int(i), s / 100.0) for _, s, i in hits]
    out.sort(key=lambda x: (-x[1], x[0]))
    return out


def group_by_norm(labels: Mapping[str, str]) -> dict[str, list[str]]:
    """normalised name -> ids carrying it: built once, reused by every `rank_grouped`."""
    out: dict[str, list[str]] = {}
    for eid, label in labels.items():
        out.setdefault(normalize_name(label), []).append(eid)
    return out


def prefix_score(q_norm: str, norm: str) -> float:
    """A prefix match's score: the share of the name already typed (< 1)."""
    return round(len(q_norm) / len(norm), 4)


def first_true(n: int, pred: Callable[[int], bool]) -> int:
    """The first i in [0, n) where `pred` turns true (it must be monotone), else n."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def shortest(ids: np.ndarray, lens: np.ndarray, k: int) -> list[int]:
    """The `k` ids with the smallest `lens`, shortest first; ties keep the order of `ids`."""
    if len(ids) > k:
        kth = np.partition(lens, k - 1)[k - 1]
        below = np.flatnonzero(lens < kth)
        ties = np.flatnonzero(lens == kth)[: k - len(below)]
        pick = np.concatenate([below, ties])
    else:
        pick = np.arange(len(ids))
    pick = pick[np.lexsort((pick, lens[pick]))]
    return [int(x) for x in ids[pick]]


def from_sorted(
    q: str,
    order: np.ndarray | range,
    name: Callable[[int], str],
    lens: np.ndarray,
    k: int,
) -> list[int]:
    """Norm ids of the `k` shortest names strictly longer than `q` that start with it,
    ties by name (`order` is the norm ids in string order, a `range` when the ids are
    sorted already; `name(id)` reads one)."""
    n = len(order)
    start = first_true(n, lambda i: name(int(order[i])) >= q)
    end = start + first_true(n - start, lambda i: not name(int(order[start + i])).startswith(q))
    if start < end and name(int(order[start])) == q:
        start += 1  # the text's own name: the normalised tier has it
    if start >= end:
        return []
    ids = np.asarray(order[start:end], dtype=np.int64)
    return shortest(ids, np.asarray(lens[ids]), k)


def rank_grouped(
    text: str,
    labels: Mapping[str, str],
    by_norm: Mapping[str, Sequence[str]],
    *,
    limit: int,
    fuzzy: bool,
    sorted_norms: tuple[Sequence[str], np.ndarray] | None = None,
) -> list[EntityMatch]:
    """Rank entities (id -> label, grouped by `group_by_norm(labels)`) against `text`.

    An exact match is also a normalised one, so both come from the text's own group; the
    fuzzy similarity is computed once per distinct normalised name. With `sorted_norms`
    (`sorted(by_norm)` and their lengths), prefix matches come between the normalised and
    the fuzzy ones.
    """
    q = normalize_name(text)
    same = sorted(by_norm.get(q, ()))
    exact = [e for e in same if labels[e] == text]
    out = [EntityMatch(e, labels[e], "exact", 1.0) for e in exact]
    seen = set(exact)
    out += [EntityMatch(e, labels[e], "normalized", 0.99) for e in same if e not in seen]
    seen.update(same)
    if sorted_norms is not None and len(out) < limit and q:
        names, lens = sorted_norms
        hits = from_sorted(q, range(len(names)), names.__getitem__, lens, limit - len(out))
        for n in (names[i] for i in hits):
            ids = sorted(by_norm[n])
            out += [EntityMatch(e, labels[e], "prefix", prefix_score(q, n)) for e in ids]
            seen.update(ids)
    if fuzzy and len(out) < limit:
        norms = [n for n in by_norm if n != q]  # q's group is all matched above
        scored = [
            (r, e) for i, r in fuzzy_scores(q, norms) for e in by_norm[norms[i]] if e not in seen
        ]
        scored.sort(key=lambda x: (-x[0], x[1]))
        out.extend(EntityMatch(e, labels[e], "fuzzy", round(r, 4)) for r, e in scored)
    return out[:limit]


def rank(text: str, names: Mapping[str, str], *, limit: int, fuzzy: bool) -> list[EntityMatch]:
    """Rank candidate entities (id -> name) against `text`, as MemoryKG.search does."""
    return rank_grouped(text, names, group_by_norm(names), limit=limit, fuzzy=fuzzy)


def normalize_answer(s: str) -> str:
    """SQuAD normalisation: lower case, drop punctuation and articles, collapse spaces.
    Underscores (PathQuestion, MetaQA relation-style names) count as spaces."""
    s = s.lower().replace("_", " ")
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())
