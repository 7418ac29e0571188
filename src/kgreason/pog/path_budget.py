"""A path search's bounds (`Budget`): `max_paths`, `max_level_rows` and the
`revisit_when_empty` rule, the first bound that stopped the search with its reason, and
the clustered expansions performed.

Why apart: the reference search (pog/paths.py) and every faster form of it (pog/backend.py's
`single_entity_paths` and `segment_paths`, e.g. pog/arrays/search.py) take one Budget and
report a bound in the same words; it needs nothing of either (paths.py's docstring says
what each bound means).
"""

from __future__ import annotations

from collections.abc import Iterable

from kgreason.pog.settings import MAX_LEVEL_ROWS


class Budget:
    def __init__(
        self,
        max_paths: int,
        max_level_rows: int | None = MAX_LEVEL_ROWS,
        revisit_when_empty: bool = False,
    ):
        self.max_paths = max_paths
        self.max_level_rows = max_level_rows
        #: a single-entity step left empty by its exclusions reaches what they excluded
        self.revisit_when_empty = revisit_when_empty
        self.hit = False
        self.reason = ""
        self.expansions = 0

    def stop(self, reason: str) -> None:
        if not self.hit:
            self.hit, self.reason = True, reason

    def level_too_big(self, rows: int, partial: int, k: int, where: str) -> bool:
        """True (and the bound recorded) when length k's level would read too many rows."""
        if self.max_level_rows is None or rows <= self.max_level_rows:
            return False
        self._level_stop(k, where, f"{partial} partial paths would read {rows} edge rows")
        return True

    def level_prefix_too_big(self, rows: Iterable[int], k: int, where: str) -> bool:
        """level_too_big for a segment search, from each partial path's rows in order:
        the bound names the first partial paths whose rows pass it."""
        if self.max_level_rows is None:
            return False
        total = 0
        for i, r in enumerate(rows, 1):
            total += r
            if total > self.max_level_rows:
                self._level_stop(
                    k, where, f"its first {i} partial paths would read {total} edge rows"
                )
                return True
        return False

    def _level_stop(self, k: int, where: str, detail: str) -> None:
        self.stop(
            f"max_level_rows={self.max_level_rows}: length {k} not searched {where} ({detail})"
        )
