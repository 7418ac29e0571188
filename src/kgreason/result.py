"""The shape every pipeline result shares (PoG's `PoGResult`, SymbolLKG's `SolveResult`).

Both carry `error_kind` (None when the question completed), `error`, `trace` (one record
per stage, from `kgreason.tracing`), `usage` (LLM usage per stage) and `timings_s`
(seconds per stage). This base adds what is derived from them, and one serialisation:
`to_dict()` is the JSON-ready dict the CLI prints and eval stores, with `ok` in it.

It is a plain mixin (no fields) so that a dataclass and a pydantic model can both use it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

#: the keys every result's to_dict() has
COMMON_KEYS = ("ok", "error_kind", "error", "trace", "usage", "timings_s")


def llm_error_kind(e: BaseException) -> str | None:
    """The kind an exception names for itself (`error_kind`: every LLM error does, e.g.
    "llm-unreadable-reply", "llm-budget-exceeded", "llm-unreachable"), or None."""
    named = getattr(type(e), "error_kind", None)
    return named if isinstance(named, str) else None


class ResultBase:
    """Mixin for pipeline results; subclasses define the fields named in COMMON_KEYS."""

    error_kind: str | None
    timings_s: dict[str, float]

    @property
    def ok(self) -> bool:
        """True when the question ran to completion (no named error)."""
        return self.error_kind is None

    @property
    def timings(self) -> dict[str, float]:
        """Seconds per stage (the same dict as `timings_s`)."""
        return self.timings_s

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields plus `ok`: one serialisation for both pipelines."""
        dump = getattr(self, "model_dump", None)
        if callable(dump):  # pydantic
            data: dict[str, Any] = dump(mode="json")
        elif dataclasses.is_dataclass(self):
            data = dataclasses.asdict(self)
        else:
            raise TypeError(f"{type(self).__name__} is neither a dataclass nor a pydantic model")
        data["ok"] = self.ok
        return data
