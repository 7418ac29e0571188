"""Line-oriented triple formats: TSV (also PathQuestion's KBs), MetaQA `head|relation|tail`,
and MetaQA's integer-id files (ids are line positions in entity2text / relation2text).

Every format skips a UTF-8 byte order mark at the start of a file (Windows editors write
one; it would otherwise become part of the first entity's id) and blank lines; TSV also
skips comment lines, whose first non-blank character is `#`."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from kgreason.kg.base import KGError


class LoadError(KGError):
    """A file that cannot be read as the requested format; names file and line."""


BOM = b"\xef\xbb\xbf"


def open_binary(path: Path) -> tuple[BinaryIO, BinaryIO]:
    """(raw file, decoded stream, past any byte order mark): the raw file's position
    drives progress bars."""
    try:
        raw = open(path, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as e:
        raise LoadError(f"{path}: cannot open: {e.strerror or e}") from e
    stream: BinaryIO = raw
    if path.suffix == ".gz":
        stream = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[assignment]
    try:
        if stream.peek(len(BOM))[: len(BOM)] == BOM:  # type: ignore[attr-defined]
            stream.read(len(BOM))
    except (OSError, EOFError):
        pass  # a corrupt gzip: reading it names the file and line
    return raw, stream


def _split(sep: str, what: str) -> Callable[[Path, int, str], tuple[str, str, str]]:
    def parse(path: Path, lineno: int, text: str) -> tuple[str, str, str]:
        parts = [p.strip() for p in text.split(sep)]
        if len(parts) != 3 or not all(parts):
            raise LoadError(
                f"{path}:{lineno}: expected {what} (3 non-empty fields), "
                f"got {len(parts)} field(s): {text[:80]!r}"
            )
        return parts[0], parts[1], parts[2]

    parse.sep = sep  # type: ignore[attr-defined]
    return parse


parse_tsv_line = _split("\t", "head<TAB>relation<TAB>tail")
parse_metaqa_line = _split("|", "head|relation|tail")


Columns = tuple[list[str], list[str], list[str]]


def iter_line_blocks(
    path: Path, stream: BinaryIO, block: int = 1 << 22
) -> Iterator[tuple[int, str]]:
    """(number of the first line, text of whole lines without the last line ending) per
    block. Working on blocks avoids per-line Python overhead; numbering stays exact."""
    carry = b""
    lineno = 1
    while True:
        try:
            chunk = stream.read(block)
        except (OSError, EOFError) as e:  # truncated or corrupt gzip
            raise LoadError(f"{path}:{lineno}: unreadable: {e}") from e
        if chunk:
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            carry, part = data[cut:], data[:cut]
        else:
            part, carry = carry, b""
        if part:
            try:
                text = part.decode("utf-8")
            except UnicodeDecodeError as e:
                line = lineno + part.count(b"\n", 0, e.start)
                raise LoadError(f"{path}:{line}: not UTF-8 ({e.reason})") from e
            text = text.replace("\r\n", "\n").removesuffix("\n")
            yield lineno, text
            lineno += text.count("\n") + 1
        if not chunk:
            return


def iter_lines(path: Path, stream: BinaryIO) -> Iterator[tuple[int, str]]:
    """(1-based line number, text without line ending) of non-blank lines."""
    for first, text in iter_line_blocks(path, stream):
        for i, line in enumerate(text.split("\n")):
            if line.strip():
                yield first + i, line


def is_comment(line: str) -> bool:
    """A TSV comment line: its first non-blank character is `#`."""
    return line.lstrip().startswith("#")


def iter_delimited(
    path: Path,
    stream: BinaryIO,
    parse: Callable[[Path, int, str], tuple[str, str, str]],
    *,
    comments: bool = False,
) -> Iterator[Columns]:
    """(heads, relations, tails) per block. A clean block (two separators per line, no
    blank or comment line, no field to strip) is split in one C call; any other block is
    parsed line by line, which skips blank lines (and `#` comment lines with `comments`),
    strips fields and names the first bad line."""
    sep = parse.sep  # type: ignore[attr-defined]
    ws = [w for w in " \t\r\x0b\x0c" if w != sep]
    unclean = [p for w in ws for p in (w + sep, sep + w, "\n" + w, w + "\n")] + ["\n\n"]
    if comments:
        unclean.append("\n#")

    def clean(text: str) -> bool:
        edges = text[:1] + text[-1:]
        if comments and text.startswith("#"):
            return False
        return not edges.isspace() and not any(p in text for p in unclean)

    def skipped(line: str) -> bool:
        return not line.strip() or (comments and is_comment(line))

    for first, text in iter_line_blocks(path, stream):
        if text.count(sep) == 2 * (text.count("\n") + 1) and clean(text):
            parts = text.replace("\n", sep).split(sep)
            if "" not in parts:
                yield parts[0::3], parts[1::3], parts[2::3]
                continue
        lines = enumerate(text.split("\n"))
        rows = [parse(path, first + i, x) for i, x in lines if not skipped(x)]
        yield [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


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
