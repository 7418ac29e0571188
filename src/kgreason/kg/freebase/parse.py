"""Reading the Freebase dump as it is published: gzip, one triple per line,
`<s>\\t<p>\\t<o>\\t.`, with the `http://rdf.freebase.com/ns/` prefix.

A block of whole lines is split in one C call (a tab never occurs inside an N-Triples
term: literals escape it), predicates are classified once each (rules.py), and only the
lines a rule keeps become Python objects. Node keys are fixed-width byte strings (`KEY`),
so everything after parsing (sorting, merging, id lookup) runs in numpy.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import BinaryIO

import numpy as np

from kgreason.kg.freebase.rules import EDGE, NAME, NS, Cleaning, predicate_rule
from kgreason.kg.loaders.lines import LoadError

#: Freebase ids are short (`m.0abc12`, `g.11b6vz2_fg`); a longer one is not an id
KEY_WIDTH = 24
KEY = f"S{KEY_WIDTH}"
_MG = (NS + b"m.", NS + b"g.")
_TERM_RE = rb"<http://rdf\.freebase\.com/ns/[mg]\.[0-9a-z_]{1,%d}>" % (KEY_WIDTH - 2)
_TERM = re.compile(_TERM_RE)
_TERMS = re.compile(rb"(?:%s\n)*%s" % (_TERM_RE, _TERM_RE))
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_SIMPLE = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def unescape(text: str) -> str:
    """An N-Triples string's value (ECHAR and UCHAR escapes), as RDF parsers give it."""
    if "\\" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        if m.group(3) is not None:
            return _SIMPLE.get(m.group(3), m.group(0))
        return chr(int(m.group(1) or m.group(2), 16))

    return _ESCAPE.sub(one, text)


def name_rank(lang: bytes, wanted: bytes) -> int | None:
    """0 the language wanted, 1 a variant of it (`en-GB`), 2 untagged, None otherwise: the
    order rdf.py uses for N-Triples names, so both builds pick the same name."""
    lang = lang.lower()
    if lang == wanted:
        return 0
    if lang.startswith(wanted + b"-"):
        return 1
    return 2 if not lang else None


@dataclass
class Parsed:
    """The lines one block keeps: edges (keys and relation ids) and name candidates."""

    heads: np.ndarray
    rels: np.ndarray
    tails: np.ndarray
    #: (key, rank, name) per name line kept
    names: list[tuple[bytes, int, str]]
    lines: int
    drops: Counter[str] = field(default_factory=Counter)


class DumpParser:
    """Turns blocks of dump lines into `Parsed`; remembers relation ids (in order of first
    kept edge, as the store builder numbers them) and each predicate's rule."""

    def __init__(self, path: Path, cleaning: Cleaning, relations: list[str] | None = None):
        self.path = path
        self.cleaning = cleaning
        self.lang = cleaning.lang.lower().encode()
        self.relations: dict[str, int] = {r: i for i, r in enumerate(relations or [])}
        self._rule: dict[bytes, tuple[str, str]] = {}

    def parse(self, data: bytes, first_line: int) -> Parsed:
        n = data.count(b"\n") + 1
        parts = data.replace(b"\n", b"\t").split(b"\t")
        if len(parts) != 4 * n or parts[3::4].count(b".") != n:
            self._raise_first_bad(data, first_line)
        subjects, predicates, objects = parts[0::4], parts[1::4], parts[2::4]
        rule = self._rule
        for p in set(predicates).difference(rule):
            rule[p] = predicate_rule(p, self.cleaning)
        kinds = [rule[p][0] for p in predicates]
        drops: Counter[str] = Counter(kinds)
        edge_rows = [i for i, k in enumerate(kinds) if k == EDGE]
        name_rows = [i for i, k in enumerate(kinds) if k == NAME]
        del drops[EDGE], drops[NAME]
        h, r, t = self._edges(edge_rows, subjects, predicates, objects, drops, first_line)
        names = self._names(name_rows, subjects, objects, drops, first_line)
        return Parsed(h, r, t, names, n, drops)

    def _edges(
        self,
        rows: list[int],
        subjects: list[bytes],
        predicates: list[bytes],
        objects: list[bytes],
        drops: Counter[str],
        first_line: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ss = [subjects[i] for i in rows]
        oo = [objects[i] for i in rows]
        s_ent = np.fromiter(map(bytes.startswith, ss, repeat(_MG)), bool, len(rows))
        o_lit = np.fromiter(map(bytes.startswith, oo, repeat(b'"')), bool, len(rows))
        o_ent = np.fromiter(map(bytes.startswith, oo, repeat(_MG)), bool, len(rows))
        drops["subject_not_entity"] += int((~s_ent).sum())
        drops["literal"] += int((s_ent & o_lit).sum())
        drops["object_not_entity"] += int((s_ent & ~o_lit & ~o_ent).sum())
        keep = np.flatnonzero(s_ent & o_ent).tolist()
        line_of = [first_line + rows[j] for j in keep]
        heads = self._keys([ss[j] for j in keep], line_of)
        tails = self._keys([oo[j] for j in keep], line_of)
        rel_of, rule = self.relations, self._rule
        rels = [rel_of.setdefault(rule[predicates[rows[j]]][1], len(rel_of)) for j in keep]
        return heads, np.array(rels, dtype=np.int64), tails

    def _names(
        self,
        rows: list[int],
        subjects: list[bytes],
        objects: list[bytes],
        drops: Counter[str],
        first_line: int,
    ) -> list[tuple[bytes, int, str]]:
        out: list[tuple[bytes, int, str]] = []
        for i in rows:
            s, o = subjects[i], objects[i]
            if not s.startswith(_MG):
                drops["subject_not_entity"] += 1
                continue
            end = o.rfind(b'"')
            if not o.startswith(b'"') or end <= 0:
                drops["object_not_entity"] += 1  # a name that is not a literal
                continue
            tail = o[end + 1 :]
            rank = name_rank(tail[1:], self.lang) if tail.startswith(b"@") else 2
            if rank is None:
                drops["name_other_language"] += 1
                continue
            try:
                value = unescape(o[1:end].decode("utf-8"))
            except UnicodeDecodeError as e:
                raise LoadError(f"{self.path}:{first_line + i}: not UTF-8 ({e.reason})") from e
            out.append((self._keys([s], [first_line + i])[0], rank, value))
        return out

    def _keys(self, terms: list[bytes], lines: list[int]) -> np.ndarray:
        """The ids of `<ns:m.x>` / `<ns:g.x>` terms as fixed-width keys; one regex pass over
        them all checks every term (the slow path only finds the first bad one)."""
        if _TERMS.fullmatch(b"\n".join(terms)) is None and terms:
            for term, lineno in zip(terms, lines, strict=True):
                if _TERM.fullmatch(term) is None:
                    raise LoadError(
                        f"{self.path}:{lineno}: not a Freebase id (m./g. followed by up to "
                        f"{KEY_WIDTH - 2} of [0-9a-z_]): {term[:80]!r}"
                    )
        return np.array([t[len(NS) : -1] for t in terms], dtype=KEY)

    def _raise_first_bad(self, data: bytes, first_line: int) -> None:
        for i, line in enumerate(data.split(b"\n")):
            fields = line.split(b"\t")
            if len(fields) != 4 or fields[3] != b".":
                raise LoadError(
                    f"{self.path}:{first_line + i}: expected a Freebase dump line "
                    f"<s><TAB><p><TAB><o><TAB>. ({len(fields)} tab-separated field(s)): "
                    f"{line[:80]!r}"
                )
        raise AssertionError("unreachable: a block failed its check but no line did")


def line_blocks(
    path: Path, stream: BinaryIO, *, block: int = 1 << 23, offset: int = 0, first_line: int = 1
) -> Iterator[tuple[int, int, bytes]]:
    """(first line number, decompressed offset after the block, whole lines without the
    last newline), reading from `offset` (a line boundary of an earlier run)."""
    carry = b""
    lineno, pos = first_line, offset
    while True:
        try:
            chunk = stream.read(block)
        except (OSError, EOFError) as e:  # truncated or corrupt gzip
            raise LoadError(f"{path}:{lineno}: unreadable: {e}") from e
        data = carry + chunk
        cut = data.rfind(b"\n") + 1 if chunk else len(data)
        part, carry = data[:cut], data[cut:]
        if part:
            pos += len(part)
            text = part[:-1] if part.endswith(b"\n") else part
            yield lineno, pos, text
            lineno += text.count(b"\n") + 1
        if not chunk:
            return


def looks_like_dump(path: Path) -> bool:
    """Whether a file's first line is a Freebase dump line (gzip or plain): how
    `kg build` tells freebase-rdf-latest.gz, whose name has no format suffix, apart."""
    import gzip

    try:
        with open(path, "rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            if gz:
                with gzip.GzipFile(fileobj=raw) as stream:
                    first = stream.readline(4096)
            else:
                first = raw.readline(4096)
    except (OSError, EOFError):
        return False
    fields = first.rstrip(b"\r\n").split(b"\t")
    return (
        len(fields) == 4
        and fields[0].startswith(b"<http://rdf.freebase.com/")
        and fields[3] == b"."
    )
