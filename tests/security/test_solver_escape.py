"""Attacks on the solver layer through program text: every one must be refused with a
named reason, and nothing may be written outside the sandbox's own directory.

Before the fix: `(echo a|(|)` made the SMT-LIB screen give up on the rest of the program,
so Z3 received `(set-option :regular-output-channel ...)` and `(include ...)`, wrote the
canary file and read files outside its temp dir; the same through the pipeline's `goal`
convention; Prover9 accepted `P(a).end_of_list%x` + `.`, which smuggled LADR commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgreason.lkg.execute import ProgramExecutor
from kgreason.lkg.programs import run_program
from kgreason.lkg.solvers import HornRunner, Prover9Runner, Z3Runner, run_z3
from kgreason.lkg.solvers.preflight import engine_read_paths
from kgreason.lkg.solvers.z3 import find_z3

HIDERS = ["(echo a|(|)", "(assert a|(|)", '(echo "a""(")', "(echo |a\\|(|)"]


def _writes(path: Path) -> str:
    return f'(set-option :regular-output-channel "{path}")\n(echo "pwned")\n'


@pytest.mark.parametrize("hider", HIDERS)
def test_output_channel_after_an_unreadable_form_is_refused(sandbox, canary, hider):
    program = f"{hider}\n{_writes(canary)}(check-sat)\n"
    res = run_z3(program, sandbox=sandbox)
    assert res.status == "parse_error" and res.error_kind in ("refused", "parse_error")
    assert (res.error or "").startswith(("refused:", "parse_error:"))
    assert not canary.exists()


@pytest.mark.parametrize("hider", HIDERS)
def test_include_after_an_unreadable_form_is_refused(sandbox, hider):
    program = f'{hider}\n(include "/etc/passwd")\n(check-sat)\n'
    res = run_z3(program, sandbox=sandbox)
    assert res.error_kind in ("refused", "parse_error") and "root:" not in res.stdout


def test_the_goal_convention_route_is_screened_too(sandbox, canary):
    """The route LLM-written programs take: the z3 convention composes the checks."""
    program = (
        "(echo a|(|)\n" + _writes(canary) + "(declare-const p Bool)\n(assert p)\n"
        "(define-fun goal () Bool p)\n"
    )
    res = ProgramExecutor(sandbox=sandbox).run("z3", program, "Is p true?", None)
    assert res.error_kind == "refused" and (res.error or "").startswith("refused:")
    out = run_program(program, "smtlib", sandbox=sandbox)
    assert out.error_kind == "refused" and not canary.exists()


@pytest.mark.parametrize(
    "command",
    [
        '(set-option :diagnostic-output-channel "x")',
        '(set-option :trace-file-name "x")',
        '(set-param "trace_file_name" "x")',
        "(set-option :smt.arith.dump_lemmas true)",
        '(include "x.smt2")',
        "(dbg-show-cmds)",
    ],
)
def test_file_commands_and_unknown_commands_are_refused(sandbox, command):
    res = Z3Runner(sandbox).run(f"(declare-const p Bool)\n{command}\n(check-sat)\n")
    assert res.error_kind == "refused" and (res.error or "").startswith("refused:")


def test_landlock_holds_even_if_the_screen_were_bypassed(sandbox, canary):
    """Defence in depth: Z3 itself asked to write the canary (no screen in the way)."""
    cmd = find_z3()
    run = sandbox.run(
        [*cmd, "p.smt2"], files={"p.smt2": _writes(canary)},
        read=engine_read_paths(cmd[0]), drop=False,
    )  # fmt: skip
    assert not canary.exists()
    assert run.infra is None and "failed to set output stream" in run.stdout


def test_writes_to_tmp_from_inside_the_sandbox_fail(sandbox, canary):
    run = sandbox.run(["/bin/sh", "-c", f"echo x > {canary}; echo rc=$?"], drop=False)
    assert not canary.exists() and "rc=0" not in run.stdout


def test_reading_the_users_files_fails(sandbox, tmp_path):
    secret = tmp_path / "notes.txt"
    secret.write_text("my secret")
    secret.chmod(0o644)
    run = sandbox.run(["/bin/cat", str(secret)], drop=False)
    assert "my secret" not in run.stdout and "Permission denied" in run.stderr


@pytest.mark.parametrize(
    "formula",
    [
        "P(a).end_of_list%x\n.",
        "P(a). end_of_list. assign(max_seconds, 1000). formulas(assumptions). Q(a)",
        "P(a) % hidden\n",
        'P("a)',
    ],
)
def test_prover9_formulas_cannot_close_their_list(sandbox, formula):
    res = Prover9Runner(sandbox).prove([formula], "P(a)")
    assert res.error_kind == "refused" and (res.error or "").startswith("refused:")
    assert "assign(max_seconds, 1000)" not in res.program or res.status == "parse_error"


def test_prover9_native_input_refuses_commands_outside_lists(sandbox):
    text = (
        "assign(max_seconds, 1000).\nformulas(assumptions).\nP(a).\nend_of_list.\n"
        "formulas(goals).\nP(a).\nend_of_list.\n"
    )
    out = run_program(text, "prover9", sandbox=sandbox)
    assert out.error_kind == "refused" and "assign(max_seconds, 1000)" in (out.error or "")
    res = ProgramExecutor(sandbox=sandbox).run("prover9", text, "", None)
    assert res.error_kind == "refused"


@pytest.mark.parametrize(
    "program",
    [
        "#script (python)\nimport os\n#end.\na.",
        '#include "/etc/passwd".',
        "#external a.",
        "%* comment *% #script (lua) x #end.",
        'a("%*"). #include "x".',
        "a. %* unterminated",
    ],
)
def test_asp_directives_that_run_code_or_read_files_are_refused(sandbox, program):
    res = HornRunner(sandbox).run_asp(program)
    assert res.error_kind == "refused" and (res.error or "").startswith("refused:")


def test_asp_directives_in_comments_and_strings_are_not_directives(sandbox):
    res = HornRunner(sandbox).run_asp('% #include "x".\na("#script"). %* #include *%\n')
    assert res.ok and res.verdict == "sat"


@pytest.mark.parametrize(
    "text",
    [
        "assign(max_seconds, 1000).\nformulas(assumptions).\np(a).\nend_of_list.\n",
        "formulas(assumptions).\np(a). % end_of_list.\nend_of_list.\nset(auto2).\n",
        'formulas(assumptions).\n"end_of_list.". p(a).\nend_of_list.\nclear(auto_denials).\n',
    ],
)
def test_prover9_raw_input_is_only_formula_lists(sandbox, text):
    res = Prover9Runner(sandbox).run_input(text)
    assert res.error_kind == "refused" and (res.error or "").startswith("refused:")
