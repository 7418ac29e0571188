"""Syntax checks for everything that is put into SPARQL query text.

IDs reach queries from question text and LLM output, so each one is checked against the
dialect's ID grammar *before* it is spliced into a query: an ID either matches a strict,
ASCII-only pattern or the call fails with `InvalidIdentifierError`. Literals (search text)
are never validated away but escaped with SPARQL's string escapes.

`re.fullmatch` with explicit ASCII classes is used on purpose: `\\d` and `\\w` accept
non-ASCII digits/letters and `$` accepts a trailing newline.
"""

from __future__ import annotations

import re

from kgreason.kg.base import InvalidIdentifierError

#: Freebase machine IDs: `m.0k3f7`, `g.11bc2xk4r9` (lower-case letters, digits, underscore).
FREEBASE_MID = re.compile(r"[mg]\.[0-9a-z_]{1,20}")
#: Freebase schema names: relations `location.location.containedby`, types `location.country`.
FREEBASE_DOTTED = re.compile(r"[a-z][a-z0-9_]{0,63}(?:\.[a-z0-9_]{1,64}){1,7}")
#: Wikidata items, properties and lexemes: `Q183`, `P17`, `L7`.
WIKIDATA_ENTITY = re.compile(r"[QPL][1-9][0-9]{0,11}")
WIKIDATA_PROPERTY = re.compile(r"P[1-9][0-9]{0,11}")
#: Absolute IRIs, ASCII only; every character below is legal inside SPARQL `<...>`
#: (no space, `<>"{}|^\\` or backtick) and legal in an RFC 3987 path/query (no `[]`, which
#: strict parsers such as Oxigraph reject outside an IPv6 host); `%` only as `%XX`.
_IRI = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*:"
    r"(?:[A-Za-z0-9\-._~:/?#@!$&'()*+,;=]|%[0-9A-Fa-f]{2}){1,2000}"
)


def _fail(kind: str, value: object) -> InvalidIdentifierError:
    return InvalidIdentifierError(f"invalid {kind}: {value!r}")


def _check(pattern: re.Pattern[str], kind: str, value: object) -> str:
    if not isinstance(value, str) or not value.isascii() or not pattern.fullmatch(value):
        raise _fail(kind, value)
    return value


def freebase_entity(value: object) -> str:
    """A MID (`m.`/`g.`) or a dotted schema name (types are entities too in Freebase)."""
    if isinstance(value, str) and value.isascii() and FREEBASE_MID.fullmatch(value):
        return value
    return _check(FREEBASE_DOTTED, "Freebase entity ID (m./g. MID or dotted name)", value)


def freebase_relation(value: object) -> str:
    return _check(FREEBASE_DOTTED, "Freebase relation (dotted name)", value)


def wikidata_entity(value: object) -> str:
    return _check(WIKIDATA_ENTITY, "Wikidata entity ID (Q/P/L number)", value)


def wikidata_property(value: object) -> str:
    return _check(WIKIDATA_PROPERTY, "Wikidata property ID (P number)", value)


def iri(value: object) -> str:
    return _check(_IRI, "IRI", value)


def escape_literal(text: str) -> str:
    """`text` as a double-quoted SPARQL string literal.

    Quotes, backslashes and line breaks use SPARQL's ECHAR escapes; other control characters
    become spaces (no `\\uXXXX`: SPARQL decodes those before parsing, so they could not
    protect anything). Text that is not valid Unicode (lone surrogates) is rejected.
    """
    if not isinstance(text, str):
        raise _fail("literal", text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail("literal (not valid Unicode)", text) from exc
    out = []
    for ch in text:
        if ch in _ECHAR:
            out.append(_ECHAR[ch])
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or ch in "\u2028\u2029":
            out.append(" ")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_ECHAR = {
    "\\": "\\\\",
    '"': '\\"',
    "'": "\\'",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def lang_tag(tag: str) -> str:
    """A BCP-47-ish language tag for `"..."@tag` (letters, digits, hyphens)."""
    return _check(re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8}){0,4}"), "language tag", tag)
