"""Read JSON printed without its braces, as the SymbolLKG paper prints its extraction reply
(Appendix B, Figure 7) and the pruner's candidates (A.3): `"entities":["name":"A",
"type":"T","name":"B","type":"T",...], "rules":[...]`.

LaTeX drops unescaped `{` `}`, so the paper's JSON lost every object brace; a model shown
those figures may answer the same way. The reading puts them back: a run of `"key": value`
pairs is an object, and inside a list a key that repeats starts the next object. An
ellipsis (`...`, `…`) is the paper's elision: dropped where it stands for list items, and
ending a string it cuts short (`"numbered 1, 2, 3, 4,...]` is the string up to the
ellipsis, then the list closes). Used only after strict JSON (with repairs) failed, so a
well-formed reply never goes through it.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")
_ELLIPSIS = ("...", "…")
#: nesting read at most (each level is a frame of the recursive reader)
MAX_DEPTH = 40
_END = object()


class _Pair:
    __slots__ = ("key", "value")

    def __init__(self, key: str, value: Any):
        self.key, self.value = key, value


def _tokens(text: str) -> list[tuple[str, Any]]:
    """(kind, value) tokens: str, scalar, punct ([ ] { } : ,), ellipsis, word."""
    out: list[tuple[str, Any]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "[]{}:,":
            out.append(("punct", c))
            i += 1
        elif text.startswith(_ELLIPSIS, i):
            out.append(("ellipsis", None))
            i += 3 if text.startswith("...", i) else 1
        elif c == '"':
            i = _string(text, i + 1, out)
        else:
            m = _SCALAR.match(text, i)
            if m:
                out.append(("scalar", json.loads(m.group())))
                i = m.end()
            else:  # a bare word (an unquoted name): up to the next delimiter
                j = i
                while j < n and text[j] not in '[]{}:,"' and not text[j].isspace():
                    j += 1
                out.append(("word", text[i:j]))
                i = j
    return out


def _string(text: str, i: int, out: list[tuple[str, Any]]) -> int:
    """Read a string body from `i`; an ellipsis followed by a closing bracket ends it."""
    buf: list[str] = []
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            try:
                buf.append(json.loads(f'"{text[i : i + 6]}"') if text[i + 1] == "u" else
                           json.loads(f'"{text[i : i + 2]}"'))  # fmt: skip
            except json.JSONDecodeError:
                buf.append(text[i + 1])
            i += 6 if text[i + 1] == "u" else 2
            continue
        if c == '"':
            out.append(("str", "".join(buf)))
            return i + 1
        if text.startswith(_ELLIPSIS, i):
            k = i + (3 if text.startswith("...", i) else 1)
            j = k
            while j < n and text[j].isspace():
                j += 1
            if j < n and text[j] in "]}":  # the paper cut the string short: it ends here
                out.append(("str", "".join(buf).rstrip()))
                out.append(("ellipsis", None))
                return k
        buf.append(c)
        i += 1
    out.append(("str", "".join(buf)))  # unterminated at the end of the text
    return n


class _Reader:
    def __init__(self, tokens: list[tuple[str, Any]]):
        self.toks, self.pos, self.depth = tokens, 0, 0

    def peek(self, k: int = 0) -> tuple[str, Any] | None:
        j = self.pos + k
        return self.toks[j] if j < len(self.toks) else None

    def sequence(self, close: str | None) -> list[Any]:
        """Items up to `close` (None: the end); `"key": value` items become _Pair."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ValueError("nested too deeply")
        items: list[Any] = []
        while (t := self.peek()) is not None:
            if t == ("punct", close):
                self.pos += 1
                break
            if t[0] == "punct" and t[1] in ",:":
                self.pos += 1
                continue
            if t[0] == "punct" and t[1] in "]}":  # a stray closer: end this sequence
                self.pos += 1
                break
            if t[0] == "ellipsis":
                self.pos += 1
                continue
            nxt = self.peek(1)
            if t[0] in ("str", "word") and nxt == ("punct", ":"):
                self.pos += 2
                items.append(_Pair(str(t[1]), self.value()))
            else:
                items.append(self.value())
        self.depth -= 1
        return items

    def value(self) -> Any:
        t = self.peek()
        if t is None:
            return None
        self.pos += 1
        if t == ("punct", "["):
            return _group(self.sequence("]"), in_list=True)
        if t == ("punct", "{"):
            return _group(self.sequence("}"), in_list=False)
        if t[0] == "ellipsis":
            return None
        return t[1]


def _group(items: list[Any], *, in_list: bool) -> Any:
    """Pairs become objects (in a list a repeated key starts a new one); other items stay."""
    if not in_list:
        return {p.key: p.value for p in items if isinstance(p, _Pair)}
    out: list[Any] = []
    cur: dict[str, Any] | None = None
    for it in items:
        if isinstance(it, _Pair):
            if cur is None or it.key in cur:
                cur = {}
                out.append(cur)
            cur[it.key] = it.value
        else:
            cur = None
            out.append(it)
    return out


def loads_braceless(text: str) -> Any:
    """The value of brace-less JSON (see the module docstring); a ValueError if none.

    Reading starts at the first `"` or bracket, so a label before the reply is skipped."""
    start = min((i for i in (text.find('"'), text.find("["), text.find("{")) if i >= 0), default=-1)
    if start < 0:
        raise ValueError("no JSON-like text")
    items = _Reader(_tokens(text[start:])).sequence(None)
    if items and all(isinstance(p, _Pair) for p in items):
        return {p.key: p.value for p in items}
    values = [v for v in items if not isinstance(v, _Pair)]
    if len(values) == 1:
        return values[0]
    raise ValueError("not one value or one object")
