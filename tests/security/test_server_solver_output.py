"""Attacks through what the engines print, on the real sandbox (both launchers): the host
revealed in the texts a caller sees, and engine output the host misreads.

Written before the defences. On the code before them:
- a Prover9 reply (failed or not) carried Prover9's banner, `Process 2 was started by root
  on HOST,` and `The command was "/tmp/kgr-bin-0/...-prover9..."` (uid 0), in its stdout;
  a clingo worker crash carried a Python traceback naming the interpreter, site-packages
  and kgreason's directory;
- `(echo "x"" (include ""/etc/passwd"") ")` then `(check-sat)` came back as status crash
  ("z3 exited with code 0"): Z3 prints the echoed string raw, and its quote opened a string
  in the reader that swallowed the verdict; an error naming `|a"b|` (Z3 writes `a\\"b`) and
  a String model value `"\\u{a}"` were misread the same way;
- a pyke chain of 1,500 rules raised RecursionError while the proof was written, and 16
  "diamonds" (1.8 KB) spent seconds writing a proof of 100,000+ lines (2^16 trees).
Z3 itself printed no host name or path in any reply tried (errors, get-info, limits): its
test below guards the same property.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

import pytest

import kgreason
from kgreason.lkg.logiclm.pyke import parse_pyke_program
from kgreason.lkg.programs import run_program
from kgreason.lkg.solvers import HornRunner, Prover9Runner, SolverLimits, Z3Runner
from kgreason.lkg.solvers.base import SolverResult

BAD_LADR = "formulas(assumptions).\n p(.\nend_of_list.\nformulas(goals).\np.\nend_of_list.\n"
GOOD_LADR = "formulas(assumptions).\np.\nend_of_list.\nformulas(goals).\np.\nend_of_list.\n"


def _internal_paths() -> list[str]:
    tmp = tempfile.gettempdir()
    paths = [f"{tmp}/kgr-bin-", f"{tmp}/kgr-solver-", str(Path(kgreason.__file__).parent)]
    paths += [sys.prefix, sys.base_prefix, str(Path.home())]
    return [p for p in paths if p not in ("", "/")]


def _leaks(text: str) -> list[str]:
    """The host name (as a word) and internal paths found in `text`."""
    host = socket.gethostname()
    found = [p for p in _internal_paths() if p in text]
    if re.search(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", text):
        found.append(f"host name {host!r}")
    return found


def _shown(res: SolverResult) -> str:
    """Every engine text of a result a caller sees (the server returns the result whole)."""
    return json.dumps({k: v for k, v in asdict(res).items() if k != "program"})


@pytest.mark.parametrize("text", [BAD_LADR, GOOD_LADR], ids=["error", "proof"])
def test_prover9_replies_name_no_host_user_or_path(sandbox, text):
    res = Prover9Runner(sandbox).run_input(text)
    assert res.status == ("parse_error" if text == BAD_LADR else "ok")
    assert "Prover9" in res.stdout and "started by <user> on <host>," in res.stdout
    assert _leaks(_shown(res)) == []
    out = run_program(text, "prover9", sandbox=sandbox)
    assert _leaks(json.dumps(asdict(out), default=str)) == []
    if text == BAD_LADR:  # the message itself still says what is wrong, and where
        assert out.status == "parse_error" and "open parenthesis" in (out.error or "")


def test_clingo_worker_crash_names_no_path(sandbox):
    """A term nested past the worker's recursion limit: the worker dies with a traceback."""
    deep = "a(" + "(" * 3000 + "x" + ",)" * 3000 + ")."
    res = HornRunner(sandbox).run_asp(deep)
    assert res.status == "crash" and "RecursionError" in (res.error or "")
    assert "_clingo_worker.py" in (res.error or "") + res.stderr  # still says where
    assert _leaks(_shown(res)) == []


@pytest.mark.parametrize(
    "program",
    [
        "(declare-const x Int)(assert (> y 2))(check-sat)",
        '(assert (= |a"b| 1))(check-sat)',
        "(get-info :all-statistics)(get-info :reason-unknown)(check-sat)(get-proof)",
    ],
)
def test_z3_replies_name_no_host_or_path(sandbox, program):
    res = Z3Runner(sandbox).run(program)
    assert res.status in ("ok", "parse_error")
    assert _leaks(_shown(res)) == []


def test_z3_echo_with_escaped_quotes_is_read(sandbox):
    echo = '(echo "x"" (include ""/etc/passwd"") ")'
    alone = run_program(echo, "smtlib", sandbox=sandbox)
    assert alone.status == "ok", alone.error
    out = run_program(f"{echo}\n(check-sat)\n", "smtlib", sandbox=sandbox)
    assert out.status == "ok" and out.verdict == "sat", out.error
    assert 'x" (include "/etc/passwd")' in out.results[0].stdout
    assert "root:" not in out.results[0].stdout  # the include inside the string never ran


def test_z3_error_quoting_a_quote_is_read(sandbox):
    """Z3 writes a quote inside an error message as \\", not SMT-LIB's "" ."""
    res = Z3Runner(sandbox).run('(assert (= |a"b| 1))\n(check-sat)\n')
    assert res.status == "parse_error" and res.error_kind == "parse_error"
    assert 'unknown constant a\\"b' in (res.error or "")
    assert res.details["check_sat"] == ["sat"]


def test_z3_string_model_with_escapes_is_read(sandbox):
    """Z3 prints a non-printable character of a String value as \\u{..}."""
    program = (
        '(declare-const s String)(declare-const t String)(assert (= t "q""x"))'
        "(assert (= (str.len s) 1))(assert (= (str.to_code s) 10))(check-sat)"
    )
    res = Z3Runner(sandbox).run(program)
    assert res.ok and res.verdict == "sat"
    assert res.model == {"s": '"\\u{a}"', "t": '"q""x"'}


def _chain(k: int) -> str:
    rules = "\n".join(f"P{i}($x, True) >>> P{i + 1}($x, True)" for i in range(k))
    return f"Predicates:\nP0($x, bool)\nFacts:\nP0(a, True)\nRules:\n{rules}\nQuery:\nP{k}(a, True)"


def _diamonds(k: int) -> str:
    rules = "\n".join(
        f"A{i}($x, True) >>> B{i}($x, True)\nA{i}($x, True) >>> C{i}($x, True)\n"
        f"B{i}($x, True) && C{i}($x, True) >>> A{i + 1}($x, True)"
        for i in range(k)
    )
    return f"Predicates:\nA0($x, bool)\nFacts:\nA0(a, True)\nRules:\n{rules}\nQuery:\nA{k}(a, True)"


def test_a_long_rule_chain_is_proved_without_recursion_error(sandbox):
    box = HornRunner(sandbox, SolverLimits(cpu_s=20, memory_mb=1024, wall_s=40))
    res = box.run(parse_pyke_program(_chain(1500)))
    assert res.ok and res.verdict == "proved" and res.answer == "True"
    lines = (res.proof or "").splitlines()
    assert lines[0].startswith("P1500(a)") and "deeper than" in res.proof  # cut, and says so


def test_shared_sub_proofs_do_not_blow_up_the_proof(sandbox):
    res = HornRunner(sandbox).run(parse_pyke_program(_diamonds(16)))
    assert res.ok and res.verdict == "proved"
    lines = (res.proof or "").splitlines()
    assert lines[0].startswith("A16(a)") and len(lines) <= 1001 and "proof cut" in lines[-1]
    small = HornRunner(sandbox).run(parse_pyke_program(_diamonds(2)))
    assert len((small.proof or "").splitlines()) == 13  # 1 + 2 * (1 + (1 + 2 * 2)): not cut
