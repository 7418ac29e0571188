"""Entity-name ranking shared by the KG backends (MemoryKG, SparqlKG candidates).

One ranking so that backends agree: exact name first, then the same name up to case,
diacritics, "_" and spacing (`normalize_name`), then difflib ratio >= `FUZZY_MIN_RATIO`
against the normalised names, best first; ties are broken by entity id.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher

from kgreason.kg.base import EntityMatch

FUZZY_MIN_RATIO = 0.6


def normalize_name(text: str) -> str:
    """Case- and diacritic-insensitive form used for name matching."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(stripped.casefold().replace("_", " ").split())


def group_by_norm(labels: Mapping[str, str]) -> dict[str, list[str]]:
    """normalised name -> ids carrying it: built once, reused by every `rank_grouped`."""
    out: dict[str, list[str]] = {}
    for eid, label in labels.items():
        out.setdefault(normalize_name(label), []).append(eid)
    return out


def rank_grouped(
    text: str,
    labels: Mapping[str, str],
    by_norm: Mapping[str, Sequence[str]],
    *,
    limit: int,
    fuzzy: bool,
) -> list[EntityMatch]:
    """Rank entities (id -> label, grouped by `group_by_norm(labels)`) against `text`.

    An exact match is also a normalised one, so both come from the text's own group; the
    fuzzy ratio is computed once per distinct normalised name, after difflib's cheap upper
    bounds (which never reject a name whose ratio passes).
    """
    q = normalize_name(text)
    same = sorted(by_norm.get(q, ()))
    exact = [e for e in same if labels[e] == text]
    out = [EntityMatch(e, labels[e], "exact", 1.0) for e in exact]
    seen = set(exact)
    out += [EntityMatch(e, labels[e], "normalized", 0.99) for e in same if e not in seen]
    seen.update(same)
    if fuzzy and len(out) < limit:
        scored: list[tuple[float, str]] = []
        sm = SequenceMatcher(None, q, "")
        for norm, eids in by_norm.items():
            if norm == q:
                continue  # all already matched above
            sm.set_seq2(norm)
            if sm.real_quick_ratio() < FUZZY_MIN_RATIO or sm.quick_ratio() < FUZZY_MIN_RATIO:
                continue
            r = sm.ratio()
            if r >= FUZZY_MIN_RATIO:
                scored.extend((r, e) for e in eids if e not in seen)
        scored.sort(key=lambda x: (-x[0], x[1]))
        out.extend(EntityMatch(e, labels[e], "fuzzy", round(r, 4)) for r, e in scored)
    return out[:limit]


def rank(text: str, names: Mapping[str, str], *, limit: int, fuzzy: bool) -> list[EntityMatch]:
    """Rank candidate entities (id -> name) against `text`, as MemoryKG.search does."""
    return rank_grouped(text, names, group_by_norm(names), limit=limit, fuzzy=fuzzy)
