"""Line-oriented triple formats: TSV (also PathQuestion's KBs), MetaQA `head|relation|tail`,
and MetaQA's integer-id files (ids are line positions in entity2text / relation2text)."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from kgreason.kg.base import KGError


class LoadError(KGError):
    """A file that cannot be read as the requested format; names file and line."""


def open_binary(path: Path) -> tuple[BinaryIO, BinaryIO]:
    """(raw file, decoded stream): the raw file's position drives progress bars."""
    try:
        raw = open(path, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as e:
        raise LoadError(f"{path}: cannot open: {e.strerror or e}") from e
    if path.suffix == ".gz":
        return raw, gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw, raw


def iter_lines(path: Path, stream: BinaryIO) -> Iterator[tuple[int, str]]:
    """(1-based line number, text without line ending) of non-blank lines."""
    lineno = 0
    try:
        for lineno, raw in enumerate(stream, 1):
            text = raw.decode("utf-8").rstrip("\r\n")
            if text.strip():
                yield lineno, text
    except UnicodeDecodeError as e:
        raise LoadError(f"{path}:{lineno}: not UTF-8 ({e.reason})") from e
    except (OSError, EOFError) as e:  # truncated or corrupt gzip
        raise LoadError(f"{path}:{lineno + 1}: unreadable: {e}") from e


def _split(sep: str, what: str) -> Callable[[Path, int, str], tuple[str, str, str]]:
    def parse(path: Path, lineno: int, text: str) -> tuple[str, str, str]:
        parts = [p.strip() for p in text.split(sep)]
        if len(parts) != 3 or not all(parts):
            raise LoadError(
                f"{path}:{lineno}: expected {what} (3 non-empty fields), "
                f"got {len(parts)} field(s): {text[:80]!r}"
            )
        return parts[0], parts[1], parts[2]

    return parse


parse_tsv_line = _split("\t", "head<TAB>relation<TAB>tail")
parse_metaqa_line = _split("|", "head|relation|tail")


def iter_delimited(
    path: Path, stream: BinaryIO, parse: Callable[[Path, int, str], tuple[str, str, str]]
) -> Iterator[tuple[str, str, str]]:
    for lineno, text in iter_lines(path, stream):
        yield parse(path, lineno, text)


def read_id_table(path: Path) -> list[str]:
    """MetaQA entity2text / relation2text: `id<TAB>text`; the id is the LINE POSITION
    (one line of entity2text carries a wrong id field, see the data's PROVENANCE)."""
    out: list[str] = []
    raw, stream = open_binary(path)
    with raw:
        for lineno, raw_line in enumerate(stream, 1):
            try:
                text = raw_line.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise LoadError(f"{path}:{lineno}: not UTF-8 ({e.reason})") from e
            parts = text.split("\t", 1)
            if len(parts) != 2 or not parts[1].strip():
                raise LoadError(f"{path}:{lineno}: expected id<TAB>text, got {text[:80]!r}")
            out.append(parts[1].strip())
    return out


def iter_metaqa_ids(
    path: Path, stream: BinaryIO, entities: list[str], relations: list[str]
) -> Iterator[tuple[str, str, str]]:
    """Id triples -> names, relations written with underscores like MetaQA's kb.txt."""
    rel_names = [r.replace(" ", "_") for r in relations]
    for lineno, text in iter_lines(path, stream):
        parts = text.split("\t")
        try:
            h, r, t = (int(p) for p in parts)
            if min(h, r, t) < 0:
                raise IndexError
            yield entities[h], rel_names[r], entities[t]
        except ValueError:
            raise LoadError(
                f"{path}:{lineno}: expected three integer ids h<TAB>r<TAB>t, got {text[:80]!r}"
            ) from None
        except IndexError:
            raise LoadError(
                f"{path}:{lineno}: id out of range ({len(entities)} entities, "
                f"{len(relations)} relations): {text[:80]!r}"
            ) from None
