"""The ASCII fast path of normalize_name gives what the per-character path gives."""

from __future__ import annotations

import random
import string
import unicodedata

from kgreason.kg import ranking
from kgreason.kg.ranking import normalize_name


def slow(text: str) -> str:
    """The per-character rules, as normalize_name applies them to non-ASCII text."""
    decomposed = unicodedata.normalize("NFKD", text)
    chars = []
    for c in decomposed:
        if unicodedata.combining(c) or c in ranking._APOSTROPHES:
            continue
        chars.append(" " if c == "_" or unicodedata.category(c).startswith("P") else c)
    out = " ".join("".join(chars).casefold().split())
    return out or " ".join(decomposed.casefold().replace("_", " ").split())


def test_every_ascii_character_alone_and_in_words() -> None:
    for i in range(128):
        c = chr(i)
        for text in (c, f"Ab{c}Cd", f"  {c}{c} x_{c}Y ", c * 3):
            assert normalize_name(text) == slow(text), repr(text)


def test_random_ascii_names() -> None:
    rng = random.Random(7)
    alphabet = string.printable
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert normalize_name(text) == slow(text), repr(text)


def test_non_ascii_still_takes_the_full_rules() -> None:
    assert normalize_name("Café  Ōsaka’s") == "cafe osakas"
    assert normalize_name("ǅemal") == slow("ǅemal")
