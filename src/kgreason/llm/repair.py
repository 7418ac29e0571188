"""json-repair with a bound on its work.

json-repair's look-aheads rescan the rest of the text from many positions: on
`["a"a"a"a...` (one unclosed array of stray quotes) it read each character ~560 times at
3,000 characters, 2.4 s for 6,000 characters and minutes for a 100,000-character reply;
`( ( ( ...` read each ~240 times (10 s at 100,000). (json-repair 0.64.9 reads that first
input linearly; `["a":"a":...` is still quadratic in 0.64.6-0.64.9, and is what
tests/security checks the budget with.) Its parser reads the text only by
indexing and slicing `JSONParser.json_str` (and replaces it when it inserts a brace), so
the parser here keeps that text as a `str` subclass that charges every character read to a
meter, and re-wraps any replacement; past the budget the repair stops with
`RepairTooCostly`. Slices come back as plain `str`, so the values json-repair builds are
exactly the ones it builds unmetered. Repairs of real replies read each character a few
times (11 at most in tests/llm/robustness), far inside the budget.
"""

from __future__ import annotations

import json
from typing import Any, SupportsIndex

from json_repair.json_parser import JSONParser

#: characters json-repair may read per character of the reply (real replies: < 9 for each
#: candidate repaired), within bounds: a short reply never runs out, and no reply makes the
#: repairs read more than MAX_READS characters (~0.5 s at ~0.75 us a read, the worst case)
READS_PER_CHAR = 32
MIN_READS = 16_384
MAX_READS = 640_000


class RepairTooCostly(Exception):
    """json-repair read more of the text than the budget allows. Not a ValueError, so
    nothing inside json-repair mistakes it for one of its own parse errors."""


class RepairMeter:
    """Reads left for the repairs of one reply (shared by all its candidates)."""

    __slots__ = ("left",)

    def __init__(self, reply_chars: int) -> None:
        self.left = min(MAX_READS, max(MIN_READS, READS_PER_CHAR * reply_chars))

    def charge(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise RepairTooCostly("the reply is too costly to repair")


class _Metered(str):
    """The text as json-repair reads it: an index is one read, a slice as many reads as its
    length (returned as a plain `str`)."""

    meter: RepairMeter

    def __new__(cls, text: str, meter: RepairMeter) -> _Metered:
        obj = super().__new__(cls, text)
        obj.meter = meter
        return obj

    def __getitem__(self, key: SupportsIndex | slice, /) -> str:
        got = str.__getitem__(self, key)
        self.meter.charge(len(got) or 1)
        return str.__str__(got)


class _MeteredParser(JSONParser):
    """json-repair's parser with its text metered, including a text it rebuilds."""

    def __init__(self, text: str, meter: RepairMeter) -> None:
        self.meter = meter
        super().__init__(text, None, False, try_valid_json_suffix=True)

    @property  # type: ignore[override]
    def json_str(self) -> str:
        return self._metered

    @json_str.setter
    def json_str(self, value: str) -> None:
        if not isinstance(value, _Metered):
            self.meter.charge(len(value))  # building it cost a pass over it
            value = _Metered(value, self.meter)
        self._metered = value


def repair_loads(text: str, meter: RepairMeter) -> Any:
    """`json_repair.loads(text)` (valid JSON as it is, else its repair), every character the
    repair reads charged to `meter`: RepairTooCostly once that is spent, ValueError when
    json-repair gives up."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return _MeteredParser(text, meter).parse()
    except RecursionError as e:
        raise ValueError("the value is nested too deeply to repair") from e
