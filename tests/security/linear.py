"""Growth checks for parsers of untrusted text: a ratio, never an absolute time.

`per_char_growth(fn, make)` times `fn(make(n))` at 10k, 50k and 200k characters (best of a
few runs each) and returns how much the cost per character grew from the smallest size to
the largest (it stops early once a size is already past the bound, so a quadratic parser
fails in seconds rather than minutes). A linear parser's cost per character stays flat (or falls, as fixed overhead
spreads out); a quadratic one's grows with n, 20x over this range.

Tiny timings are noise, so each size's cost is floored at the cost per character of a
reference linear scan of the same text in the same run (one pass of Python bytecode per
line plus a C pass over the characters): a parser that is cheaper than reading its input
once counts as linear. `assert_linear` fails above `MAX_GROWTH`, which leaves room for noise
and for log factors while a quadratic parser (about 20x here, and 400x in total time) is
far outside it.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable
from typing import Any

SIZES = (10_000, 50_000, 200_000)
#: allowed growth of the cost per character from 10k to 200k characters (quadratic: ~20)
MAX_GROWTH = 4.0


def _best(fn: Callable[[], Any], repeat: int) -> float:
    """Best of `repeat` runs with the cyclic collector paused: late in a full suite the
    heap holds millions of objects from earlier tests, and a collection landing inside a
    run charges their traversal to the parser (seen as 4-6x growth on linear parsers)."""
    best = float("inf")
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            with contextlib.suppress(Exception):  # a parser may refuse the text: time counts
                fn()
            best = min(best, time.perf_counter() - t0)
    finally:
        if enabled:
            gc.enable()
    return best


def _reference(text: str) -> None:
    for line in text.splitlines():
        line.strip()
    text.lower()


def per_char_costs(
    fn: Callable[[str], Any], make: Callable[[int], str], repeat: int = 3
) -> dict[int, float]:
    """Seconds per character at each size, floored at the reference scan's."""
    out: dict[int, float] = {}
    for n in SIZES:
        text = make(n)
        t = _best(lambda text=text: fn(text), repeat)
        ref = _best(lambda text=text: _reference(text), repeat)
        out[n] = max(t, ref) / max(1, len(text))
        if out[n] / out[SIZES[0]] > MAX_GROWTH:
            break  # super-linear already: the larger sizes would only take longer
    return out


def per_char_growth(fn: Callable[[str], Any], make: Callable[[int], str]) -> float:
    costs = per_char_costs(fn, make)
    return max(costs.values()) / costs[SIZES[0]]


def assert_linear(fn: Callable[[str], Any], make: Callable[[int], str], what: str) -> None:
    """Fails when the cost per character grows more than MAX_GROWTH-fold; a parser slow
    enough to fail is measured once more, so one noisy run does not fail the suite."""
    growth = per_char_growth(fn, make)
    if growth > MAX_GROWTH:
        growth = min(growth, per_char_growth(fn, make))
    assert growth <= MAX_GROWTH, (
        f"{what}: cost per character grew {growth:.1f}x from {SIZES[0]:,} to "
        f"{SIZES[-1]:,} characters (linear ~1x, quadratic ~{SIZES[-1] // SIZES[0]}x)"
    )


def repeat_to(unit: str, prefix: str = "", suffix: str = "") -> Callable[[int], str]:
    """A maker: `prefix + unit * k + suffix`, k chosen so the text is about n characters."""

    def make(n: int) -> str:
        k = max(1, (n - len(prefix) - len(suffix)) // max(1, len(unit)))
        return prefix + unit * k + suffix

    return make
