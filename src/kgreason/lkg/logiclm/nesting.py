"""Recursion-depth bookkeeping shared by the recursive-descent parsers (FOL, Python
expressions): each names its own limit and error in `nest`, the `with` block is written once."""

from __future__ import annotations

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
