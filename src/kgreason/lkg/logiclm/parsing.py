"""Pieces shared by the recursive-descent parsers (FOL, Python expressions): the token scan
and the recursion-depth guard. Each parser keeps its own token pattern, limit and errors."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager


class DepthGuard:
    depth: int = 0

    def nest(self) -> None:
        """Enter one level; raise the parser's own error past its limit."""
        raise NotImplementedError

    @contextmanager
    def nested(self) -> Iterator[None]:
        """One level deeper for the body of the `with`: bounds recursion on hostile input."""
        self.nest()
        try:
            yield
        finally:
            self.depth -= 1


def scan(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """Successive non-empty matches of `pattern` from the start of `text`; stops where it
    no longer matches (each pattern has a `bad` group to catch strays first)."""
    pos = 0
    while pos < len(text):
        m = pattern.match(text, pos)
        if not m or m.end() == pos:
            return
        pos = m.end()
        yield m
