"""Triples already in memory, as a build source: what `kg subset` writes a store from."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kgreason.kg.loaders.lines import Columns


@dataclass
class TripleSource:
    """The part of `Source` the store builder reads, over (head, relation, tail) columns.
    `names` holds display names of named nodes; others resolve as in any RDF source
    (MIDs unnamed, other keys their own name)."""

    heads: Sequence[str]
    relations: Sequence[str]
    tails: Sequence[str]
    names: dict[str, str] = field(default_factory=dict)
    #: what the manifest records as this source (e.g. the store it was cut from)
    origin: dict[str, object] = field(default_factory=dict)
    path: Path = Path("<memory>")
    format: str = "subset"
    has_names: bool = True
    dropped: dict[str, int] = field(default_factory=dict)
    literals_dropped: int = 0
    bytes_read: int = 0
    #: inverse pairs to record as given instead of detecting them (a subset keeps its full
    #: store's: pairs found on part of the triples could differ)
    inverses: list[dict[str, object]] | None = None

    @property
    def size(self) -> int:
        return len(self.heads)

    def batches(self, size: int = 1 << 16) -> Iterator[Columns]:
        for a in range(0, len(self.heads), size):
            self.bytes_read = min(len(self.heads), a + size)
            yield (
                list(self.heads[a : a + size]),
                list(self.relations[a : a + size]),
                list(self.tails[a : a + size]),
            )

    def describe(self) -> list[dict[str, object]]:
        return [{"format": self.format, **self.origin}]
