"""Entity search over an endpoint: cheap server-side candidates, exact ranking client-side.

The server is asked for (a) names equal to the text (an index lookup) and (b) a bounded set
of candidates whose name shares a character trigram with the text (REGEX, case-insensitive).
The candidates are then ranked by `kgreason.kg.ranking.rank`, the ranking `MemoryKG.search`
uses (exact, then the same name under the one normaliser `normalize_name`: case, diacritics,
underscores, punctuation, spacing; then fuzzy similarity >= 0.6),
so an endpoint and the in-memory KG agree whenever the candidate set covers the matches.

Virtuoso 7's REGEX works on UTF-8 bytes and does not match non-ASCII pattern characters,
so the pattern is pure ASCII: each letter also accepts a run of non-ASCII characters
(`(?:u|[^\\x00-\\x7F]+)`), which is what makes "Dusseldorf" find "Düsseldorf".
"""

from __future__ import annotations

import re

from kgreason.kg.ranking import FUZZY_MIN_RATIO, normalize_name, rank
from kgreason.kg.sparql import ids

__all__ = [
    "FUZZY_MIN_RATIO",  # re-exported: the ranking now lives in kgreason.kg.ranking
    "candidate_filter",
    "case_variants",
    "rank",
    "virtuoso_text_filter",
]
_MAX_FRAGMENTS = 24


def _fragments(text: str) -> list[str]:
    """The first _MAX_FRAGMENTS distinct trigrams (or short tokens) of the text, in order:
    collection stops there (the list of all of them, searched once per trigram, was
    quadratic on a long search text)."""
    frags: dict[str, None] = {}
    for tok in re.findall(r"[a-z0-9]+", normalize_name(text)):
        grams = [tok] if len(tok) <= 3 else (tok[i : i + 3] for i in range(len(tok) - 2))
        for g in grams:
            frags.setdefault(g)
            if len(frags) == _MAX_FRAGMENTS:
                return list(frags)
    return list(frags)


def _letter(ch: str) -> str:
    return f"(?:{ch}|[^\\x00-\\x7F]+)" if ch.isalpha() else ch


def candidate_filter(text: str, var: str = "?n") -> str:
    """A FILTER over name variable `var` that every name matching `text` should pass.

    Text without any ASCII letters or digits (e.g. another script) falls back to a
    case-insensitive substring test, which the server evaluates with its own LCASE.
    """
    frags = _fragments(text)
    if not frags:
        needle = ids.escape_literal(text.casefold().strip())
        return f"FILTER(CONTAINS(LCASE(STR({var})), {needle}))"
    pattern = "|".join("".join(_letter(c) for c in f) for f in frags)
    return f'FILTER(REGEX(STR({var}), {ids.escape_literal(pattern)}, "i"))'


def virtuoso_text_filter(text: str, var: str = "?n") -> str | None:
    """Virtuoso free-text candidates (needs its RDF literal text index): any name with a
    word starting like a word of `text` (first 4 characters, so typos after them are kept).
    Case-insensitive; diacritics are not folded ("Dusseldorf" does not find "Düsseldorf",
    "düsseldorf" does). None when the text has no word of 3+ characters."""
    words = [w for w in re.findall(r"[^\W_]+", text.casefold()) if len(w) >= 3]
    terms = list(dict.fromkeys(f'"{w[:4]}*"' if len(w) >= 4 else f'"{w}"' for w in words))
    if not terms:
        return None
    return f"{var} bif:contains {ids.escape_literal(' OR '.join(terms[:_MAX_FRAGMENTS]))} ."


def case_variants(text: str) -> list[str]:
    """Spellings that differ from `text` only in case or spacing: each is an index lookup,
    so "lookup" search finds "nijmegen" -> "Nijmegen" without scanning names."""
    base = " ".join(text.split())
    forms = [text, base, base.lower(), base.upper(), base.title(), base.capitalize()]
    forms.append(" ".join(w[:1].upper() + w[1:] for w in base.split()))
    return list(dict.fromkeys(forms))
