"""Minimal S-expression reader for SMT-LIB text (solver output and program screening)."""

from __future__ import annotations

SExpr = str | list["SExpr"]


def split_top(text: str) -> list[str]:
    """Split text into top-level forms (atoms or balanced parentheses), keeping raw text.

    Strings ("..." with "" escapes), |quoted symbols| and ; comments are honoured.
    An unbalanced tail is returned as one last item so callers can report it.
    """
    items: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        start = i
        if c == "(":
            depth = 0
            while i < n:
                c = text[i]
                if c == '"':
                    i = _skip_string(text, i)
                    continue
                if c == "|":
                    j = text.find("|", i + 1)
                    i = n if j < 0 else j + 1
                    continue
                if c == ";":
                    j = text.find("\n", i)
                    i = n if j < 0 else j + 1
                    continue
                if c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        i += 1
                        break
                i += 1
        elif c == '"':
            i = _skip_string(text, i)
        else:
            while i < n and not text[i].isspace() and text[i] not in "()":
                i += 1
            if i == start:  # stray ")"
                i += 1
        items.append(text[start:i])
    return items


def _skip_string(text: str, i: int) -> int:
    i += 1
    n = len(text)
    while i < n:
        if text[i] == '"':
            if i + 1 < n and text[i + 1] == '"':
                i += 2
                continue
            return i + 1
        i += 1
    return n


def parse(text: str) -> SExpr:
    """Parse one form into nested lists of atom strings."""
    tokens = _tokens(text)
    pos = 0

    def read() -> SExpr:
        nonlocal pos
        if pos >= len(tokens):
            raise ValueError("unexpected end of s-expression")
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            out: list[SExpr] = []
            while pos < len(tokens) and tokens[pos] != ")":
                out.append(read())
            if pos >= len(tokens):
                raise ValueError("missing ')'")
            pos += 1
            return out
        if tok == ")":
            raise ValueError("unexpected ')'")
        return tok

    return read()


def _tokens(text: str) -> list[str]:
    toks: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "()":
            toks.append(c)
            i += 1
        elif c == '"':
            j = _skip_string(text, i)
            toks.append(text[i:j])
            i = j
        elif c == "|":
            j = text.find("|", i + 1)
            j = n if j < 0 else j + 1
            toks.append(text[i:j])
            i = j
        elif c == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '()";':
                j += 1
            toks.append(text[i:j])
            i = j
    return toks


def unparse(e: SExpr) -> str:
    return e if isinstance(e, str) else "(" + " ".join(unparse(x) for x in e) + ")"
