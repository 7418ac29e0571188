"""The backup answer of an unsolved problem (Logic-LM's protocol, `lkg.backup_answer`).

Logic-LM answers a problem whose program failed with a random option, so every problem
counts. Ours is seeded by the problem id (a SHA-256 of it), not by a run-wide generator:
the same problem gets the same letter whatever the order, concurrency or resumption of a
run, so a replayed run is byte-identical and the letter can be recorded beside the row
under either setting (both accuracies come from the same rows). The paper is silent; the
default (`"none"`) counts an unsolved problem wrong.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from kgreason.lkg.options import split_option


def backup_letter(key: str, letters: Sequence[str]) -> str | None:
    """The letter the random backup picks for the problem `key` (its id); None without
    letters. Uniform over `letters` up to 2^-64."""
    if not letters:
        return None
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return letters[int.from_bytes(digest[:8], "big") % len(letters)]


def option_letters(options: Sequence[str] | None) -> list[str]:
    """The options' letters ("A) True" -> "A"; an option with none gets its position's)."""
    return [split_option(o)[0] or chr(65 + i) for i, o in enumerate(options or [])]
