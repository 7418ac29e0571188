"""Entity-name normalisation and ranking, shared by every KG backend and the topic linker.

ONE normaliser (`normalize_name`): diacritics (NFKD, combining marks dropped), case,
underscores, punctuation and spacing. The store's name index (built with it), MemoryKG, the
SPARQL search and PoG's linker all use it, so "tigres uanl", "Tigres UANL" and "Tigres_UANL"
are the same name everywhere, and a match that differs only in this form counts as exact.

One ranking so that backends agree: exact name first, then the same normalised name, then
(only when asked, `prefix=True`: type-ahead search) names the normalised text is a prefix
of, shortest first, then fuzzy matches (rapidfuzz's normalised Indel similarity `fuzz.ratio`, the same measure as
difflib's ratio computed exactly) >= `FUZZY_MIN_RATIO` against the normalised names, best
first; ties are broken by entity id.
"""

from __future__ import annotations

import heapq
import unicodedata
from bisect import bisect_left
from collections.abc import Mapping, Sequence

from rapidfuzz import fuzz, process

from kgreason.kg.base import EntityMatch

FUZZY_MIN_RATIO = 0.6
#: apostrophes vanish ("Schindler's" = "Schindlers"); other punctuation separates words
_APOSTROPHES = frozenset("'\u2018\u2019\u02bc`\u00b4")


def normalize_name(text: str) -> str:
    """Case-, diacritic-, underscore-, punctuation- and spacing-insensitive form of a name.

    A name made only of punctuation ("!!!") keeps its punctuation, so it is not confused
    with the empty string."""
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


def prefix_key(norm: str) -> tuple[int, str]:
    """Order of prefix matches: the shortest completion first, then by name."""
    return len(norm), norm


def prefix_norms(q_norm: str, sorted_norms: Sequence[str], k: int) -> list[str]:
    """The first `k` (by `prefix_key`) normalised names strictly longer than `q_norm` that
    start with it, found by bisection in `sorted_norms`; reads only the matching block."""
    if not q_norm or k <= 0:
        return []
    i = bisect_left(sorted_norms, q_norm)
    block = []
    while i < len(sorted_norms) and sorted_norms[i].startswith(q_norm):
        if sorted_norms[i] != q_norm:
            block.append(sorted_norms[i])
        i += 1
    return heapq.nsmallest(k, block, key=prefix_key)


def rank_grouped(
    text: str,
    labels: Mapping[str, str],
    by_norm: Mapping[str, Sequence[str]],
    *,
    limit: int,
    fuzzy: bool,
    sorted_norms: Sequence[str] | None = None,
) -> list[EntityMatch]:
    """Rank entities (id -> label, grouped by `group_by_norm(labels)`) against `text`.

    An exact match is also a normalised one, so both come from the text's own group; the
    fuzzy similarity is computed once per distinct normalised name. With `sorted_norms`
    (`sorted(by_norm)`), prefix matches come between the normalised and the fuzzy ones.
    """
    q = normalize_name(text)
    same = sorted(by_norm.get(q, ()))
    exact = [e for e in same if labels[e] == text]
    out = [EntityMatch(e, labels[e], "exact", 1.0) for e in exact]
    seen = set(exact)
    out += [EntityMatch(e, labels[e], "normalized", 0.99) for e in same if e not in seen]
    seen.update(same)
    if sorted_norms is not None and len(out) < limit:
        for n in prefix_norms(q, sorted_norms, limit - len(out)):
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
