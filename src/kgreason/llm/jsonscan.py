"""Where a reply's brackets and double-quoted strings open and close, for the JSON search
of `llm.parse.extract_json`, in one pass each.

Only quotes, backslashes and brackets change anything, so the scanners step from one of
those to the next (found by a compiled regex, in C) instead of reading every character in
Python. The candidate spans are read as if a scan started at each of the first brackets
(strings are tracked from that bracket on, as a reader starting there would see them), but
without rescanning the reply once per bracket: scans that reach the same state at the same
character go on identically, so they are run as one (at most three at a time, one per
state), each bracket waiting for its depth to come back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice

_EVENTS = re.compile(r'["\\{}\[\]]')
_OPENERS = re.compile(r"[{\[]")
#: a number, literal or bare word at the end of the text, read backwards (see trim_truncated)
_TAIL_TOKEN = re.compile(r"\s*[\w.+-]+")
_DANGLING_KEY = re.compile(r"\"[^\"]*\"\s*:$")

_OUT, _IN, _ESC = 0, 1, 2
_PAIR = {"}": "{", "]": "["}


def scan(text: str) -> tuple[int | None, int, int | None]:
    """(start of the outermost bracket still open at the end, deepest nesting, start of an
    unterminated string), reading strings in double quotes as JSON does."""
    stack: list[int] = []
    deepest = 0
    str_start: int | None = None
    esc_at = -2  # a backslash in a string at esc_at escapes the character after it
    for m in _EVENTS.finditer(text):
        i = m.start()
        c = text[i]
        if str_start is not None:
            if esc_at == i - 1:
                esc_at = -2
            elif c == "\\":
                esc_at = i
            elif c == '"':
                str_start = None
            continue
        if c == '"':
            str_start = i
        elif c in "{[":
            stack.append(i)
            deepest = max(deepest, len(stack))
        elif c in "}]" and stack:
            stack.pop()
    return (stack[0] if stack else None), deepest, str_start


@dataclass
class _Run:
    """One string-state trajectory and the brackets waiting on it: a bracket of type t
    that opened at depth v closes when this run's depth of t is back to v."""

    state: int
    esc_at: int = -2
    depth: dict[str, int] = field(default_factory=lambda: {"{": 0, "[": 0})
    waiting: dict[tuple[str, int], list[int]] = field(default_factory=dict)

    def absorb(self, other: _Run) -> None:
        for (t, v), starts in other.waiting.items():
            key = (t, v - other.depth[t] + self.depth[t])
            self.waiting.setdefault(key, []).extend(starts)

    def step(self, i: int, c: str, closed: dict[int, int]) -> None:
        if self.state == _ESC:  # the escaped character (its backslash was at i - 1)
            self.state = _IN
        elif self.state == _IN:
            if c == "\\":
                self.state, self.esc_at = _ESC, i
            elif c == '"':
                self.state = _OUT
        elif c == '"':
            self.state = _IN
        elif c in "{[":
            self.depth[c] += 1
        elif c in "}]":
            t = _PAIR[c]
            self.depth[t] -= 1
            for s in self.waiting.pop((t, self.depth[t]), ()):
                closed[s] = i


def _merged(runs: list[_Run]) -> list[_Run]:
    """One run per state (runs in the same state go on identically), without idle ones."""
    by_state: dict[int, _Run] = {}
    for r in runs:
        if not r.waiting:
            continue
        if r.state in by_state:
            by_state[r.state].absorb(r)
        else:
            by_state[r.state] = r
    return list(by_state.values())


def _closing(text: str, starts: list[int]) -> dict[int, int]:
    """start -> index of its closing bracket, for the starts that close."""
    closed: dict[int, int] = {}
    pending = set(starts)
    runs: list[_Run] = []
    for m in _EVENTS.finditer(text, starts[0]):
        i = m.start()
        c = text[i]
        for r in runs:  # an escape that took a character no event saw
            if r.state == _ESC and r.esc_at < i - 1:
                r.state = _IN
        runs = _merged(runs)
        if i in pending:
            pending.discard(i)
            run = next((r for r in runs if r.state == _OUT), None)
            if run is None:
                run = _Run(_OUT)
                runs.append(run)
            run.waiting.setdefault((c, run.depth[c]), []).append(i)
        for r in runs:
            r.step(i, c, closed)
        runs = _merged(runs)
        if not runs and not pending:
            break
    return closed


def balanced_spans(text: str, max_starts: int) -> tuple[list[str], list[str]]:
    """Candidate JSON spans: balanced {...} or [...] regions opened by the first `max_starts`
    brackets, as (top-level spans, longest first; spans nested inside another). A nested
    span is read only when no top-level one is JSON: `[]` inside `{'a': []}` is part of the
    value, not the value."""
    starts = [m.start() for m in islice(_OPENERS.finditer(text), max_starts)]
    if not starts:
        return [], []
    closed = _closing(text, starts)
    top: list[str] = []
    inner: list[str] = []
    covered = -1
    for start in starts:
        end = closed.get(start)
        if end is not None:
            (inner if start < covered else top).append(text[start : end + 1])
            covered = max(covered, end)
    top.sort(key=len, reverse=True)
    inner.sort(key=len, reverse=True)
    return top, inner


def trim_truncated(tail: str) -> str:
    """A value cut at the token limit, trimmed back to its last complete item: an
    unterminated string (it may be a cut-off name) and a dangling key, comma or bare token
    are dropped, never completed; json-repair then closes the brackets."""
    str_start = scan(tail)[2]
    if str_start is not None:  # an open string is cut where it began
        tail = tail[:str_start]
    else:  # else a number or literal that may be cut: the token run before trailing space,
        # found backwards in one match (`[\w.+-]+\s*$` retried it from every character)
        m = _TAIL_TOKEN.match(tail[::-1])
        if m is not None:
            tail = tail[: len(tail) - m.end()]
    for _ in range(3):  # "key": / trailing commas
        tail = tail.rstrip()
        if tail.endswith(":"):
            tail = _DANGLING_KEY.sub("", tail)
        tail = tail.rstrip().rstrip(",")
    return tail
