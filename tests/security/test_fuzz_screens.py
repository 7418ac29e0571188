"""Property-based fuzzing of the screens and parsers: arbitrary text never crashes the
host (only the typed errors), and no screen passes a forbidden command.

"Passes" is judged by an independent reference reader in this file (a small state
machine over Z3's, LADR's and clingo's lexical rules), not by the screens' own code."""

from __future__ import annotations

import contextlib
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgreason.lkg.logiclm.fol import parse_fol
from kgreason.lkg.logiclm.pyexpr import parse_expr
from kgreason.lkg.solvers import ProgramFormatError
from kgreason.lkg.solvers.screens import screen_asp, screen_ladr_formula, screen_smtlib
from kgreason.lkg.solvers.sexpr import SExprError, parse, split_top, tokenize

FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TRICKY = st.text(alphabet='()|";\\\n %*#.abcx:-', max_size=40)
ANY = st.text(max_size=300)
SMT_BAD = [
    '(include "f")',
    '(set-option :regular-output-channel "f")',
    '(set-option :diagnostic-output-channel "f")',
    '(set-param "trace_file_name" "f")',
    "(set-option :dump-models true)",
]


def _smt_top_heads(text: str) -> list[str] | None:
    """Reference reader: heads of top-level forms, None if the text is unreadable."""
    heads: list[str] = []
    i, n, depth = 0, len(text), 0
    want_head = False
    while i < n:
        c = text[i]
        if c == ";":
            while i < n and text[i] != "\n":
                i += 1
        elif c == '"':
            i += 1
            while True:
                if i >= n:
                    return None
                if text[i] == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        i += 2
                        continue
                    break
                i += 1
            i += 1
            want_head = False
            continue
        elif c == "|":
            j = text.find("|", i + 1)
            if j < 0:
                return None
            i = j + 1
            want_head = False
            continue
        elif c == "(":
            depth += 1
            want_head = depth == 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return None
        elif not c.isspace():
            m = re.match(r"[^\s()\";|]+", text[i:])
            assert m
            if want_head:
                heads.append(m.group(0))
            want_head = False
            i += len(m.group(0))
            continue
        i += 1
    return heads if depth == 0 else None


@FAST
@given(ANY)
def test_smtlib_screen_and_readers_never_crash(text):
    reason = screen_smtlib(text)
    assert reason is None or reason.startswith(("refused:", "parse_error:"))
    split_top(text)  # engine-output mode: never raises
    try:
        tokenize(text, strict=True)
        parse(text)
    except SExprError as e:
        assert str(e).startswith(("unreadable:", "parse_error:"))


@FAST
@given(TRICKY, st.sampled_from(SMT_BAD), TRICKY)
def test_smtlib_screen_never_passes_a_file_command(before, bad, after):
    text = f"{before}\n{bad}\n{after}"
    if screen_smtlib(text) is None:
        heads = _smt_top_heads(text)
        assert heads is not None  # the screen accepted text the reference cannot read
        assert not {"include", "set-param"} & set(heads)
        assert ":regular-output-channel" not in _outside_literals(text)
        assert ":dump-models" not in _outside_literals(text)


def _outside_literals(text: str) -> str:
    text = re.sub(r'"(?:[^"]|"")*"', " ", text)
    text = re.sub(r"\|[^|]*\|", " ", text)
    return re.sub(r";[^\n]*", " ", text)


@FAST
@given(ANY)
def test_ladr_screen_never_crashes_and_never_passes_a_terminator(text):
    reason = screen_ladr_formula(text)
    if reason is None:
        bare = re.sub(r'"[^"]*"', "", text)
        assert "." not in bare and "%" not in bare and "end_of_list" not in bare
    else:
        assert reason.startswith("refused:")


@FAST
@given(TRICKY, st.sampled_from(["#script (python) x #end.", '#include "f".', "#external a."]),
       TRICKY)  # fmt: skip
def test_asp_screen_never_passes_a_code_or_file_directive(before, bad, after):
    text = f"{before}\n{bad}\n{after}"
    if screen_asp(text) is None:
        bare = re.sub(r"%\*.*?\*%", "", text, flags=re.S)
        bare = re.sub(r'"(?:\\.|[^"\\\n])*"', "", bare)
        bare = re.sub(r"%[^\n]*", "", bare)
        assert not re.search(r"#(script|include|external)", bare)


@FAST
@given(ANY)
def test_asp_screen_never_crashes(text):
    reason = screen_asp(text)
    assert reason is None or reason.startswith("refused:")


@FAST
@given(st.text(alphabet="()¬∀∃∧∨→↔⊕=≠,.xyPQab ", max_size=200) | ANY)
def test_fol_parser_raises_only_format_errors(text):
    with contextlib.suppress(ProgramFormatError):
        parse_fol(text)


@FAST
@given(st.text(alphabet="()[]-+*/%<>=!&|^~,:notandor xy12 ", max_size=200) | ANY)
def test_expression_parser_raises_only_format_errors(text):
    with contextlib.suppress(ProgramFormatError):
        parse_expr(text)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3000), st.sampled_from(["(", "¬", "(not ", "[", "-"]))
def test_any_depth_is_a_result_or_a_named_error(depth, opener):
    closer = {"(": ")", "(not ": ")", "[": "]"}.get(opener, "")
    text = opener * depth + "x" + closer * depth
    for fn in (parse_fol, parse_expr):
        with contextlib.suppress(ProgramFormatError):
            fn(text)
    try:
        parse(text)
    except SExprError as e:
        assert "nesting deeper than" in str(e) or str(e).startswith("parse_error:")
    assert screen_smtlib(text) is None or screen_smtlib(text).startswith(("refused", "parse"))
