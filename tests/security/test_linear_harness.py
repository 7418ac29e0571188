"""The growth check itself: it must pass a linear parser and fail a quadratic one, and
leave the cyclic collector as it found it (it pauses it while timing)."""

from __future__ import annotations

import gc
import re

import pytest

from tests.security.linear import assert_linear, repeat_to


def _quadratic(text: str) -> int:
    """Rescans the rest of the text from every line start: the classic accidental O(n^2)."""
    hits = 0
    for m in re.finditer("\n", text):
        hits += text.count("x", m.end())
    return hits


def _linear(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.startswith("x"))


LINES = repeat_to("abcdefghijklmnopqrstuvwxyz\n")


def test_quadratic_parser_fails_the_check():
    with pytest.raises(AssertionError, match="cost per character grew"):
        assert_linear(_quadratic, LINES, "quadratic")


def test_linear_parser_passes_the_check():
    assert_linear(_linear, LINES, "linear")


def test_collector_state_is_restored():
    assert gc.isenabled()
    assert_linear(_linear, LINES, "linear")
    assert gc.isenabled()
    gc.disable()
    try:
        assert_linear(_linear, LINES, "linear")
        assert not gc.isenabled()
    finally:
        gc.enable()
