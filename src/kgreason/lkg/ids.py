"""Name normalisation and hash node IDs (paper section 3.1, Table 1).

The paper hashes the lemmatised name and type so that "The blue book" and "Blue Book" become
one node. A full lemmatiser is a heavy dependency for what is mostly article, case, plural
and spelling noise, so this is the "equivalent" the issue allows: camelCase and letter/digit
boundaries split ("SmallSoftwareFirm", "Computer1"), underscores and punctuation become
spaces, leading articles go, and each word gets a conservative plural strip.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_ARTICLES = {"the", "a", "an"}
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")
_NON_WORD = re.compile(r"[^\w\s]|_")
_SPACE = re.compile(r"\s+")
#: words ending in "s" that are not plurals (a stem would merge the wrong things)
_KEEP_S = {
    "is", "was", "has", "this", "its", "his", "hers", "yes", "gas", "bus", "lens", "news",
    "series", "species", "physics", "mathematics", "economics", "always", "perhaps",
}  # fmt: skip


def _singular(w: str) -> str:
    if len(w) <= 3 or w in _KEEP_S or not w.endswith("s") or w.isdigit():
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "shes", "ches", "xes", "zes")):
        return w[:-2]
    if w.endswith(("ss", "us", "is", "ous")):
        return w
    return w[:-1]


def lkg_name_key(name: str) -> str:
    """LKG node key of an entity/concept name (camelCase split, articles dropped, words
    singularised): 'The blue books' -> 'blue book'. Not the KG name normaliser
    (`kgreason.kg.ranking.normalize_name`), which keeps words as they are."""
    s = unicodedata.normalize("NFKC", name)
    s = _CAMEL.sub(" ", s)
    s = _NON_WORD.sub(" ", s).casefold()
    words = _SPACE.split(s.strip())
    i = 0  # leading articles skipped by index (slicing per article was quadratic)
    while len(words) - i > 1 and words[i] in _ARTICLES:
        i += 1
    return " ".join(_singular(w) for w in words[i:] if w)


def normalize_text(text: str) -> str:
    """Whitespace-, case- and quote-insensitive form used to check that raw_text occurs in
    the input and to key rules/constraints by their expression."""
    s = unicodedata.normalize("NFKC", text)
    s = s.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'")
    s = s.replace("\u2019", "'")
    return _SPACE.sub(" ", s).strip().casefold()


def node_id(kind: str, key: str) -> str:
    """SHA-256 of the node kind and its normalised key (name, or expression for logic nodes).

    `kind` is the node class (entity, concept, rule, constraint). An entity's semantic type
    is deliberately not hashed: the same individual typed "Person" in one chunk and
    "Student" in another must stay one node; the types are kept as attributes.
    """
    norm = lkg_name_key(key) if kind in ("entity", "concept") else normalize_text(key)
    return hashlib.sha256(f"{kind}\x1f{norm}".encode()).hexdigest()


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
