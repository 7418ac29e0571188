"""Reading triple files into (head, relation, tail) string triples plus names.

A `Source` is one input file (or a MetaQA id directory). Iterating it yields triples and
fills `source.names` (only RDF carries names and literals; `literals` is the RDF literal
policy, "drop" or "keep", see `rdf.iter_rdf`; line formats have no literals). Which nodes count as unnamed is decided by
`resolve_names`, shared by the store builder and `load_all` so both see the same graph.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kgreason.kg.loaders.lines import (
    Columns,
    LoadError,
    is_comment,
    iter_delimited,
    iter_metaqa_ids,
    open_binary,
    parse_metaqa_line,
    parse_tsv_line,
    read_id_table,
)
from kgreason.kg.loaders.rdf import (
    LITERAL_POLICIES,
    UNNAMED_ID,
    check_literal_policy,
    iter_rdf,
)

FORMATS = ("tsv", "metaqa", "pathquestion", "nt", "ttl", "metaqa-ids")
_BY_SUFFIX = {".tsv": "tsv", ".nt": "nt", ".ttl": "ttl", ".turtle": "ttl"}

__all__ = [
    "FORMATS",
    "LITERAL_POLICIES",
    "LoadError",
    "Source",
    "detect_format",
    "literal_policy",
    "load_all",
    "resolve_names",
]


def _is_metaqa_ids_dir(path: Path) -> bool:
    return (path / "entity2text.txt").is_file() and (path / "relation2text.txt").is_file()


def detect_format(path: Path) -> str:
    """By extension (`.gz` looked through); `.txt` by its first line (tab -> tsv, `|` ->
    metaqa), blank lines and TSV `#` comments passed over (a `#` line shaped as a MetaQA
    triple, `#1 Hit|r|t`, is one); a directory or `.tsv` beside entity2text/relation2text
    -> metaqa-ids."""
    if path.is_dir():
        if _is_metaqa_ids_dir(path):
            return "metaqa-ids"
        raise LoadError(f"{path}: a directory, but not MetaQA ids (no entity2text.txt)")
    suffix = Path(path.name.removesuffix(".gz")).suffix.lower()
    if suffix == ".tsv" and _is_metaqa_ids_dir(path.parent):
        return "metaqa-ids"
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    if suffix == ".txt":
        raw, stream = open_binary(path)
        with raw:
            for line in stream:
                text = line.decode("utf-8", "replace")
                metaqa = "\t" not in text and text.count("|") == 2
                if text.strip() and (metaqa or not is_comment(text)):
                    return "tsv" if "\t" in text else "metaqa" if "|" in text else "tsv"
        return "tsv"
    raise LoadError(f"{path}: cannot tell the format from the extension; pass --format")


def file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@dataclass
class Source:
    path: Path
    format: str = "auto"
    names: dict[str, str] = field(default_factory=dict)
    #: Bytes consumed so far and in total (raw file sizes), for progress bars.
    bytes_read: int = 0
    size: int = 0
    triples: int = 0
    #: RDF literal objects: "drop" (not edges, the default) or "keep" (nodes).
    literals: str = "drop"
    #: Under "drop": subject -> literal-valued triples left out (filled while iterating).
    dropped: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        check_literal_policy(self.literals)
        if not self.path.exists():
            raise LoadError(f"{self.path}: no such file")
        if self.format == "auto":
            self.format = detect_format(self.path)
        if self.format not in FORMATS:
            raise LoadError(f"{self.path}: unknown format {self.format!r} (one of {FORMATS})")
        self.size = sum(f.stat().st_size for f in self.files())

    @property
    def has_names(self) -> bool:
        return self.format in ("nt", "ttl")

    def files(self) -> list[Path]:
        if self.format == "metaqa-ids" and self.path.is_dir():
            return sorted(self.path.glob("*.tsv"))
        return [self.path]

    @property
    def literals_dropped(self) -> int:
        return sum(self.dropped.values())

    def describe(self) -> list[dict[str, object]]:
        extra: dict[str, object] = {"literals": self.literals} if self.has_names else {}
        return [
            {"path": str(f.resolve()), "format": self.format, "sha256": file_sha256(f), **extra}
            for f in self.files()
        ]

    def __iter__(self) -> Iterator[tuple[str, str, str]]:
        for heads, rels, tails in self.batches():
            yield from zip(heads, rels, tails, strict=True)

    def batches(self, size: int = 1 << 16) -> Iterator[Columns]:
        """Triples in file order as (heads, relations, tails) columns (the builder's path)."""
        done = 0
        if self.format == "metaqa-ids":
            base = self.path if self.path.is_dir() else self.path.parent
            entities = read_id_table(base / "entity2text.txt")
            relations = read_id_table(base / "relation2text.txt")
        for f in self.files():
            raw, stream = open_binary(f)
            with raw:
                if self.format in ("tsv", "pathquestion"):
                    it = iter_delimited(f, stream, parse_tsv_line, comments=True)
                elif self.format == "metaqa":
                    it = iter_delimited(f, stream, parse_metaqa_line)
                elif self.format == "metaqa-ids":
                    it = _batched(iter_metaqa_ids(f, stream, entities, relations), size)
                else:
                    rdf = iter_rdf(
                        f,
                        stream,
                        self.format,
                        self.names,
                        literals=self.literals,
                        dropped=self.dropped,
                    )
                    it = _batched(rdf, size)
                for batch in it:
                    self.bytes_read = done + raw.tell()
                    self.triples += len(batch[0])
                    yield batch
            done += f.stat().st_size
            self.bytes_read = done


def _batched(it: Iterator[tuple[str, str, str]], size: int) -> Iterator[Columns]:
    while batch := list(itertools.islice(it, size)):
        yield [t[0] for t in batch], [t[1] for t in batch], [t[2] for t in batch]


def resolve_names(keys: Sequence[str], names: dict[str, str] | None) -> list[str | None]:
    """Display name per node, or None for an unnamed node (Freebase MID or blank node
    without a name). Without any named source (names is None) every node is its own name."""
    if names is None:
        return list(keys)
    return [names.get(k, None if UNNAMED_ID.match(k) else k) for k in keys]


def load_all(sources: Sequence[Source]) -> tuple[list[tuple[str, str, str]], dict[str, str] | None]:
    """Everything in memory (small files, tests): triples in file order and the names dict
    that MemoryKG needs to show exactly what a store built from the same sources shows."""
    triples = [t for s in sources for t in s]
    if not any(s.has_names for s in sources):
        return triples, None
    names: dict[str, str] = {}
    for s in sources:
        names.update(s.names)
    # subjects whose literal facts were dropped are still entities (as in the store); an
    # unnamed one (a MID) cannot be told apart here and is left out
    dropped = [k for s in sources for k in s.dropped]
    keys = list(dict.fromkeys([x for t in triples for x in (t[0], t[2])] + list(names) + dropped))
    resolved = resolve_names(keys, names)
    return triples, {k: n for k, n in zip(keys, resolved, strict=True) if n is not None}


def literal_policy(described: Sequence[dict[str, object]]) -> str | None:
    """The literal policy recorded in a store manifest's `sources` (`Source.describe`):
    None when no source is RDF; "keep" for RDF sources built before the policy existed
    (they kept literal nodes); "mixed" if the sources disagree."""
    found = {str(d.get("literals", "keep")) for d in described if d.get("format") in ("nt", "ttl")}
    if not found:
        return None
    return found.pop() if len(found) == 1 else "mixed"
