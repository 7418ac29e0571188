"""Z3 on SMT-LIB 2 programs, in the sandbox.

The program is declarative SMT-LIB text, parsed by Z3 itself; nothing the LLM writes
is executed as Python. `screens.screen_smtlib` reads the program as Z3's scanner does and
refuses any command outside the allowed set and any option that names a file or an
output channel, and anything it cannot read; the sandbox confines Z3 anyway.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from kgreason.lkg.solvers.base import SolverLimits, SolverResult, SolverUnavailable, tail
from kgreason.lkg.solvers.preflight import (
    PREFLIGHT_LIMITS,
    EngineCheck,
    check_engine,
    engine_read_paths,
    unavailable_result,
)
from kgreason.lkg.solvers.redact import redact, redact_result
from kgreason.lkg.solvers.sandbox import Sandbox, SandboxRun, apply_limit
from kgreason.lkg.solvers.screens import screen_smtlib
from kgreason.lkg.solvers.sexpr import SExprError, form_end, parse, unparse

NAME = "z3"
_RESULTS = ("sat", "unsat", "unknown")
_ERROR = re.compile(r'^\(error "(.*)"\)$', re.S)
_MARK = "kgr-option:"
_SPACE = " \t\r\n\f\v"  # the white space of Z3's scanner
_BASE = "__base__"

#: Which options a multiple-choice question selects (Logic-LM / SatLM semantics).
OptionMode = Literal["must_be_true", "could_be_true", "cannot_be_true", "could_be_false"]


def find_z3() -> list[str]:
    """Command prefix for Z3: the z3-solver wheel's binary, else a worker on its library."""
    candidates = [Path(sys.executable).parent / "z3"]
    spec = importlib.util.find_spec("z3")
    if spec and spec.origin:
        pkg = Path(spec.origin).parent
        candidates += [pkg / "bin" / "z3", pkg.parent.parent.parent.parent / "bin" / "z3"]
    which = shutil.which("z3")
    if which:
        candidates.append(Path(which))
    for c in candidates:
        if c.is_file() and c.stat().st_mode & 0o111:
            return [str(c), "-smt2"]
    if spec is not None:
        return [sys.executable, "-I", str(Path(__file__).with_name("_z3_worker.py"))]
    raise SolverUnavailable("z3: no z3 binary found and the z3-solver package is not installed")


def screen(program: str) -> str | None:
    """Reason to refuse the program ("refused: ..."), or None."""
    return screen_smtlib(program)


def _refusal(reason: str, program: str) -> SolverResult:
    kind = "parse_error" if reason.startswith("parse_error:") else "refused"
    return SolverResult(NAME, "parse_error", error_kind=kind, error=reason, program=program)  # type: ignore[arg-type]


def preflight(sandbox: Sandbox) -> EngineCheck:
    """Can Z3 run in this sandbox (as its user)? Once per sandbox."""
    cmd = find_z3()
    paths = [cmd[0]] if cmd[0] != sys.executable else [sys.executable, cmd[-1], *_z3_pkg()]
    read = engine_read_paths(*paths)
    return check_engine(
        sandbox, NAME,
        lambda drop: sandbox.run(
            [*cmd, "p.smt2"], files={"p.smt2": "(check-sat)\n"}, limits=PREFLIGHT_LIMITS,
            read=read, drop=drop,
        ),
        lambda run: run.infra is None and run.returncode == 0 and "sat" in run.stdout,
        paths,
    )  # fmt: skip


def _z3_pkg() -> list[str]:
    spec = importlib.util.find_spec("z3")
    return [str(Path(spec.origin).parent)] if spec and spec.origin else []


class Z3Runner:
    """Runs SMT-LIB programs. One object per configuration; cheap to keep around."""

    def __init__(self, sandbox: Sandbox | None = None, limits: SolverLimits | None = None):
        self.sandbox = sandbox or Sandbox(limits)
        self.limits = limits

    def run(self, program: str, *, auto_model: bool = True) -> SolverResult:
        """Run the program; verdict = the last (check-sat) answer. With `auto_model`, a
        `(get-model)` is appended when the program asks for none, so sat results carry a model."""
        stop = self._refuse(program)
        if stop is not None:
            return stop
        text = program
        added_model = False
        if auto_model and "(check-sat" in program and "get-model" not in program:
            text = program.rstrip() + "\n(get-model)\n"
            added_model = True
        return _result(self._exec(text), text, added_model)

    def _refuse(self, program: str) -> SolverResult | None:
        """The screen's refusal, or the engine's absence, before anything runs."""
        refused = screen(program)
        if refused:
            return _refusal(refused, program)
        check = preflight(self.sandbox)
        return None if check.ok else unavailable_result(NAME, check, program)

    def _exec(self, text: str) -> SandboxRun:
        cmd = find_z3()
        return self.sandbox.run(
            [*cmd, "program.smt2"], files={"program.smt2": text}, limits=self.limits,
            read=engine_read_paths(cmd[0], *_z3_pkg()), engine=NAME,
        )  # fmt: skip

    def check_options(
        self,
        base_smt: str,
        option_smts: Mapping[str, str],
        mode: OptionMode = "must_be_true",
    ) -> SolverResult:
        """Test each option (an SMT-LIB Boolean term) against the base declarations+assertions.

        must_be_true: base ∧ ¬opt unsat (valid); could_be_true: base ∧ opt sat;
        cannot_be_true: base ∧ opt unsat; could_be_false: base ∧ ¬opt sat.
        `details["selected"]` lists the options that qualify; `answer` is set only when
        exactly one does ("... EXCEPT" questions: use the complementary mode).
        """
        bad = [k for k in option_smts if not re.fullmatch(r"[\w\-]+", k)]
        if bad:
            raise ValueError(f"option keys must be plain names, got {bad[0]!r}")
        # the base alone first: an unsat base makes every option "valid", say so
        parts = [base_smt.rstrip(), f'(echo "{_MARK}{_BASE}")\n(check-sat)']
        for key, term in option_smts.items():
            negate = mode in ("must_be_true", "could_be_false")
            t = f"(not {term.strip()})" if negate else term.strip()
            parts.append(f'(echo "{_MARK}{key}")\n(push 1)\n(assert {t})\n(check-sat)\n(pop 1)')
        program = "\n".join(parts) + "\n"
        stop = self._refuse(program)
        if stop is not None:
            return stop
        run = self._exec(program)
        res = _result(run, program, False)
        per: dict[str, str] = {}
        errors: dict[str, str] = {}
        current: str | None = None
        for item in responses(run.stdout):
            if item.startswith('"' + _MARK) or item.startswith(_MARK):
                current = item.strip('"')[len(_MARK) :]
            elif current is not None and item in _RESULTS:
                per[current] = item
            elif current is not None and (m := _ERROR.match(item)):
                errors.setdefault(current, redact(m.group(1)))
        base_verdict = per.pop(_BASE, None)
        errors.pop(_BASE, None)
        want = "sat" if mode in ("could_be_true", "could_be_false") else "unsat"
        selected = [k for k in option_smts if per.get(k) == want]
        res.details.update(per_option=per, option_errors=errors, selected=selected, mode=mode)
        res.details["base"] = base_verdict
        if res.status == "parse_error" and errors and len(errors) < len(option_smts):
            res.error = "; ".join(f"option {k}: {v}" for k, v in errors.items())
        if res.ok:
            undecided = [k for k in option_smts if per.get(k) not in ("sat", "unsat")]
            res.verdict = "unknown" if undecided else want
            res.answer = selected[0] if len(selected) == 1 else None
        return res


def responses(out: str) -> list[str]:
    """Z3's responses in its output, in order. A line opening with "(" starts a form, read
    to its closing ")" across lines (strings as SMT-LIB writes them, `""` escaping a quote);
    `(error "...")` runs to the line that ends with `")` (Z3 writes a quote in a message
    as `\\"`); any other line is one response as printed: a verdict, or `echo` text, which
    Z3 prints raw, so a quote in it opens no string that would swallow what follows."""
    items: list[str] = []
    pos, n = 0, len(out)
    while pos < n:
        eol = out.find("\n", pos)
        eol = n if eol < 0 else eol
        line = out[pos:eol].strip(_SPACE)
        if line.startswith('(error "'):
            start = pos
            while not out[pos:eol].rstrip(_SPACE).endswith('")') and eol < n:
                pos = eol + 1
                eol = out.find("\n", pos)
                eol = n if eol < 0 else eol
            items.append(out[start:eol].strip(_SPACE))
        elif line.startswith("("):
            at = out.index("(", pos)
            end = form_end(out, at)
            if end < 0:  # not closed: the rest is one item, as the caller reports it
                items.append(out[at:])
                break
            items.append(out[at:end])
            pos = end
            continue
        elif line:
            items.append(line)
        pos = eol + 1
    return items


def _result(run: SandboxRun, program: str, added_model: bool) -> SolverResult:
    """The result of a run, its shown texts redacted (`redact.redact_result`)."""
    return redact_result(_read(run, program, added_model))


def _read(run: SandboxRun, program: str, added_model: bool) -> SolverResult:
    res = SolverResult(
        NAME,
        "ok",
        stdout=tail(run.stdout),
        stderr=tail(run.stderr),
        time_s=run.time_s,
        program=program,
    )
    res.details["network_isolated"] = run.network_isolated
    if apply_limit(run, res):
        return res
    verdicts: list[str] = []
    errors: list[str] = []
    for item in responses(run.stdout):
        if item in _RESULTS:
            verdicts.append(item)
        elif m := _ERROR.match(item):
            msg = m.group(1)
            if added_model and "model is not available" in msg:
                continue
            errors.append(msg)
        elif item.startswith("("):
            _absorb(item, res)
    res.details["check_sat"] = verdicts
    if errors:
        oom = any("out of memory" in e.lower() for e in errors)
        res.status = "memory" if oom else "parse_error"
        res.error_kind = "memory_limit" if oom else "parse_error"
        res.error = "; ".join(errors[:5])
        return res
    clean_exit = run.returncode == 0 or (run.returncode == 1 and added_model and verdicts)
    if not clean_exit or (not verdicts and "(check-sat" in program):
        res.status = "crash"
        res.error_kind = "crash"
        res.error = f"z3 exited with code {run.returncode}: {tail(run.stderr or run.stdout, 300)}"
        return res
    res.verdict = verdicts[-1] if verdicts else None
    return res


def _absorb(item: str, res: SolverResult) -> None:
    """Interpret a parenthesised response: a model, (get-value) pairs or an unsat core."""
    try:
        e = parse(item)
    except SExprError as exc:  # e.g. a model nested deeper than sexpr.MAX_DEPTH
        res.details["model_error"] = str(exc)
        return
    if not isinstance(e, list):
        return
    body = e[1:] if e and e[0] == "model" else e
    if body and all(isinstance(x, list) and x and x[0] == "define-fun" for x in body):
        model: dict[str, str] = {}
        for d in body:
            assert isinstance(d, list)
            if len(d) >= 5:
                name, args, value = d[1], d[2], d[4]
                model[str(name)] = (
                    unparse(value) if args == [] else unparse(["lambda", args, value])
                )
        res.model = model
    elif body and all(isinstance(x, list) and len(x) == 2 for x in body):
        res.values = {**(res.values or {}), **{unparse(x[0]): unparse(x[1]) for x in body}}  # type: ignore[index]
    elif all(isinstance(x, str) for x in e):
        res.details["unsat_core"] = [str(x) for x in e]


def run_z3(
    program: str, *, limits: SolverLimits | None = None, sandbox: Sandbox | None = None
) -> SolverResult:
    return Z3Runner(sandbox, limits).run(program)


def check_options(
    base_smt: str,
    option_smts: Mapping[str, str],
    mode: OptionMode = "must_be_true",
    *,
    limits: SolverLimits | None = None,
    sandbox: Sandbox | None = None,
) -> SolverResult:
    return Z3Runner(sandbox, limits).check_options(base_smt, option_smts, mode)


def z3_version(sandbox: Sandbox | None = None) -> str:
    cmd = find_z3()
    if cmd[0] == sys.executable:
        import z3

        return f"{z3.get_version_string()} (library worker)"
    box = sandbox or Sandbox()
    check = preflight(box)
    if not check.ok:
        raise SolverUnavailable(check.detail)
    run = box.run(
        [cmd[0], "--version"], limits=SolverLimits(5, 512, 10),
        read=engine_read_paths(cmd[0]), engine=NAME,
    )  # fmt: skip
    return f"{run.stdout.strip()} ({cmd[0]})"
