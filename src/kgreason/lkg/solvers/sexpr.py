"""S-expression tokenizer and reader for SMT-LIB text (program screening and Z3 output).

Why a tokenizer that mirrors Z3's own scanner: the screen must see exactly the forms Z3
will see. A screen that skips what it cannot read lets `(echo a|(|)` hide a following
`(set-option :regular-output-channel "FILE")` from it. So the lexical rules are Z3's:
`;` comments to end of line, strings `"..."` with `""` as the escaped quote, quoted
symbols `|...|`, and simple symbols made of letters, digits and `~!@$%^&*_-+=<>.?/:#'`.
Where Z3 versions differ (a backslash inside `|...|` or a string), or on any character
outside that set, `tokenize(strict=True)` raises instead of guessing: the caller refuses.

Nothing here recurses: `parse` is iterative and refuses nesting deeper than `MAX_DEPTH`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

SExpr = str | list["SExpr"]

#: Deepest nesting `parse` builds into a tree (screening itself has no depth limit).
MAX_DEPTH = 500
_SYMBOL_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789~!@$%^&*_-+=<>.?/:#'"
)


class SExprError(ValueError):
    """Text the reader cannot read; the message starts with the named reason."""


class Token(NamedTuple):
    """One token. A tuple, not a dataclass: a 200,000-character program is 200,000
    tokens, and tuples of plain values leave the cyclic collector's work (whose full
    passes hold the interpreter lock) after one pass, where objects stay in it."""

    #: "(" , ")", "symbol", "quoted" (|...|), "string", "keyword" (:name)
    kind: str
    text: str
    start: int
    end: int


def tokenize(text: str, *, strict: bool = True) -> list[Token]:
    """Tokens of `text`. strict (reading a program): raise SExprError on anything Z3 might
    read differently (unterminated string or |symbol|, backslash in either, unknown
    character). Not strict (reading engine output, which Z3 writes as SMT-LIB 2.6: `""` is
    the only escape, a backslash is a character): the unreadable rest is one "symbol"."""
    return list(_tokens(text, 0, strict))


def _tokens(text: str, i: int, strict: bool) -> Iterator[Token]:
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n\f\v":
            i += 1
        elif c == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif c in "()":
            yield Token(c, c, i, i + 1)
            i += 1
        elif c == '"' or c == "|":
            j = _end_quoted(text, i)
            problem = (
                ("unterminated string" if c == '"' else "unterminated |quoted symbol|")
                if j < 0
                else (
                    "backslash inside a string or |quoted symbol|"
                    if strict and "\\" in text[i + 1 : j - 1]
                    else ""
                )
            )
            if problem:
                if strict:
                    raise SExprError(f"unreadable: {problem} at offset {i}")
                yield Token("symbol", text[i:], i, n)
                return
            yield Token("string" if c == '"' else "quoted", text[i:j], i, j)
            i = j
        elif c in _SYMBOL_CHARS:
            j = i
            while j < n and text[j] in _SYMBOL_CHARS:
                j += 1
            yield Token("keyword" if c == ":" else "symbol", text[i:j], i, j)
            i = j
        else:
            if strict:
                raise SExprError(f"unreadable: character {c!r} at offset {i}")
            j = i
            while j < n and text[j] not in " \t\r\n()":
                j += 1
            yield Token("symbol", text[i:j], i, j)
            i = j


def form_end(text: str, start: int) -> int:
    """Index just past the form that opens at `start` (engine output, not strict), or -1
    when it is not closed before the end of `text`."""
    depth = 0
    for t in _tokens(text, start, False):
        if t.kind == "(":
            depth += 1
        elif t.kind == ")":
            depth -= 1
            if depth <= 0:
                return t.end
        elif depth == 0:
            return t.end
    return -1


def _end_quoted(text: str, i: int) -> int:
    """Index just past the closing delimiter of the string/|symbol| opening at i, or -1."""
    q = text[i]
    j = i + 1
    n = len(text)
    while True:
        k = text.find(q, j)
        if k < 0:
            return -1
        if q == '"' and k + 1 < n and text[k + 1] == '"':
            j = k + 2
            continue
        return k + 1


def forms(tokens: list[Token], text: str = "") -> list[tuple[int, int]]:
    """(first, last+1) token-index spans of the top-level forms; raises SExprError when the
    parentheses do not balance."""
    spans: list[tuple[int, int]] = []
    depth = 0
    start = 0
    for k, t in enumerate(tokens):
        if t.kind == "(":
            if depth == 0:
                start = k
            depth += 1
        elif t.kind == ")":
            depth -= 1
            if depth < 0:
                raise SExprError(f"parse_error: unbalanced ')' at {_where(tokens, k, text)}")
            if depth == 0:
                spans.append((start, k + 1))
        elif depth == 0:
            spans.append((k, k + 1))
    if depth:
        raise SExprError(
            f"parse_error: missing ')': the form opened at {_where(tokens, start, text)} is not closed"
        )
    return spans


def _where(tokens: list[Token], k: int, text: str) -> str:
    at = tokens[k].start
    if not text:
        return f"offset {at}"
    line = text.count("\n", 0, at) + 1
    return f"line {line} column {at - (text.rfind(chr(10), 0, at) + 1) + 1}"


def split_top(text: str, *, strict: bool = False) -> list[str]:
    """Top-level forms (atoms or balanced parentheses) as raw text. Not strict (engine
    output): an unbalanced tail is returned as one last item so callers can report it."""
    toks = tokenize(text, strict=strict)
    items: list[str] = []
    depth = 0
    start = 0
    for t in toks:
        if t.kind == "(":
            if depth == 0:
                start = t.start
            depth += 1
        elif t.kind == ")":
            if depth == 0:
                if strict:
                    raise SExprError(f"unreadable: unbalanced ')' at offset {t.start}")
                items.append(")")
                continue
            depth -= 1
            if depth == 0:
                items.append(text[start : t.end])
        elif depth == 0:
            items.append(t.text)
    if depth:
        if strict:
            raise SExprError("unreadable: missing ')' at the end of the program")
        items.append(text[start:])
    return items


def parse(text: str, *, max_depth: int = MAX_DEPTH) -> SExpr:
    """Parse one form into nested lists of atom strings, without recursion.

    Raises SExprError("parse_error: nesting deeper than N") past `max_depth`."""
    stack: list[list[SExpr]] = []
    result: SExpr | None = None
    for t in tokenize(text, strict=False):
        if result is not None:
            raise SExprError(f"parse_error: text after the form at offset {t.start}")
        if t.kind == "(":
            if len(stack) >= max_depth:
                raise SExprError(f"parse_error: nesting deeper than {max_depth}")
            stack.append([])
        elif t.kind == ")":
            if not stack:
                raise SExprError("parse_error: unexpected ')'")
            done = stack.pop()
            if stack:
                stack[-1].append(done)
            else:
                result = done
        elif stack:
            stack[-1].append(t.text)
        else:
            result = t.text
    if stack:
        raise SExprError("parse_error: missing ')'")
    if result is None:
        raise SExprError("parse_error: unexpected end of s-expression")
    return result


def unparse(e: SExpr) -> str:
    """Text of a parsed form, without recursion."""
    out: list[str] = []
    work: list[SExpr | None] = [e]  # None closes a list
    while work:
        x = work.pop()
        if x is None:
            out.append(")")
        elif isinstance(x, str):
            if out and out[-1] != "(":
                out.append(" ")
            out.append(x)
        else:
            if out and out[-1] != "(":
                out.append(" ")
            out.append("(")
            work.append(None)
            work.extend(reversed(x))
    return "".join(out)
