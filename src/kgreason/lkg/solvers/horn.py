"""Horn-rule route on clingo, in the sandbox.

Why clingo and not Pyke (SymbolLKG's and Logic-LM's choice): Pyke is unmaintained, runs
only on Python <= 3.11 (through the `scitools-pyke` fork) and compiles rule bases into
a `compiled_krb` directory that it silently reuses across runs, so one problem's rules
leak into the next unless the directory is deleted first. clingo is maintained, ships
wheels for current Pythons, and its grounder computes exactly the forward-chaining
closure of a Horn program (the unique stable model of a stratified program).

Semantics: facts and rule heads may be negated (¬P, strong negation: an explicit "False"
value in Logic-LM's encoding); body literals may also use negation as failure. The query
is "proved" if derived, "disproved" if its complement is derived (or, under the closed
world assumption, if it is not derived), "unknown" otherwise and "inconsistent" if both.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kgreason.lkg.solvers.base import (
    ProgramFormatError,
    SolverLimits,
    SolverResult,
    SolverUnavailable,
    tail,
)
from kgreason.lkg.solvers.horn_asp import Atom, HornProgram, Rule, decode, derivation, to_asp
from kgreason.lkg.solvers.preflight import (
    PREFLIGHT_LIMITS,
    EngineCheck,
    check_engine,
    engine_read_paths,
    unavailable_result,
)
from kgreason.lkg.solvers.redact import redact_result
from kgreason.lkg.solvers.sandbox import Sandbox, SandboxRun, apply_limit
from kgreason.lkg.solvers.screens import screen_asp

NAME = "clingo"
#: Run by path, not `-m`: importing the kgreason package would double the start-up time.
#: `-I` keeps the script's directory off sys.path (our `z3.py` must not shadow anything).
_WORKER = [sys.executable, "-I", str(Path(__file__).with_name("_clingo_worker.py"))]

__all__ = ["Atom", "HornProgram", "HornRunner", "Rule", "run_asp", "run_horn"]


class HornRunner:
    def __init__(self, sandbox: Sandbox | None = None, limits: SolverLimits | None = None):
        self.sandbox = sandbox or Sandbox(limits)
        self.limits = limits

    def _solve(
        self, asp: str, max_models: int
    ) -> tuple[SandboxRun | None, SolverResult, dict | None]:
        check = preflight(self.sandbox)
        if not check.ok:
            return None, unavailable_result(NAME, check, asp), None
        run = self.sandbox.run(
            [*_WORKER, "program.lp", str(max_models)], files={"program.lp": asp},
            limits=self.limits, read=engine_read_paths(*_clingo_paths()), engine=NAME,
        )  # fmt: skip
        res, payload = _read(run, asp, self.limits or self.sandbox.limits)
        return run, redact_result(res), payload

    def run_asp(self, program: str, *, max_models: int = 1) -> SolverResult:
        """Raw ASP (e.g. an LLM-written rule program in clingo syntax); directives that run
        code or read files are refused. verdict = "sat"/"unsat"; model = {"atoms": ...}."""
        refused = screen_asp(program)
        if refused:
            return SolverResult(
                NAME, "parse_error", error_kind="refused", program=program, error=refused
            )
        _, res, payload = self._solve(program, max_models)
        if payload is not None:
            res.verdict = payload["status"]
            models = payload["models"]
            if models:
                res.model = {"atoms": " ".join(models[0]["text"])}
            res.details["models"] = [m["text"] for m in models]
        return res

    def run(self, program: HornProgram) -> SolverResult:
        """Answer the query: verdict proved/disproved/unknown/inconsistent, answer
        True/False/Unknown, proof = the derivation tree of the query or of its complement."""
        try:
            asp = to_asp(program)
        except ProgramFormatError as exc:
            res = SolverResult(NAME, "parse_error", error_kind="parse_error", error=str(exc))
            res.details["kind"] = exc.kind
            return res
        _, res, payload = self._solve(asp, 1)
        if payload is None:
            return res
        if payload["status"] != "sat" or not payload["models"]:
            res.status, res.error_kind = "solver_error", "solver_error"
            res.error = (
                f"no stable model ({payload['status']}): negation as failure is not stratified"
            )
            return res
        derived, fired = decode(payload["models"][0]["structured"], program)
        q = Atom(program.query.pred, program.query.args, program.query.negated)
        pos, neg = q in derived, q.complement() in derived
        if pos and neg:
            res.verdict, res.answer = "inconsistent", None
        elif pos:
            res.verdict, res.answer = "proved", "True"
        elif neg or program.closed_world:
            res.verdict, res.answer = "disproved", "False"
        else:
            res.verdict, res.answer = "unknown", "Unknown"
        lines: list[str] = []
        if pos:
            lines += derivation(q, program, derived, fired)
        if neg:
            lines += derivation(q.complement(), program, derived, fired)
        if not pos and not neg and program.closed_world:
            lines.append(f"{q} is not derivable (closed world)")
        res.proof = "\n".join(lines) or None
        res.details.update(
            derived=sorted(map(str, derived)),
            fired=[(program.rules[i].name or f"rule {i + 1}", b) for i, b in fired],
            notes=list(program.notes),
        )
        return res


def _read(run: SandboxRun, asp: str, lim: SolverLimits) -> tuple[SolverResult, dict | None]:
    """The worker's JSON line read into a result (no payload when the run failed)."""
    res = SolverResult(
        NAME, "ok", stdout=tail(run.stdout), stderr=tail(run.stderr), time_s=run.time_s,
        program=asp,
    )  # fmt: skip
    res.details["network_isolated"] = run.network_isolated
    if apply_limit(run, res):
        return res, None
    try:
        payload = json.loads(run.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError, RecursionError):
        payload = None
    if not isinstance(payload, dict):
        if "bad_alloc" in run.stderr or "MemoryError" in run.stderr:
            res.status, res.error_kind = "memory", "memory_limit"
            res.error = f"memory limit {lim.memory_mb} MB exceeded"
        else:
            res.status, res.error_kind = "crash", "crash"
            res.error = f"clingo worker exited with code {run.returncode}: {tail(run.stderr, 300)}"
        return res, None
    if "error" in payload:
        msgs = "; ".join(payload.get("messages", []))
        if payload["error"] == "memory" or "bad_alloc" in msgs:
            res.status, res.error_kind = "memory", "memory_limit"
            res.error = f"memory limit {lim.memory_mb} MB exceeded ({msgs})"
        else:
            res.status, res.error_kind, res.error = "parse_error", "parse_error", msgs
        return res, None
    return res, payload


def run_horn(
    program: HornProgram, *, limits: SolverLimits | None = None, sandbox: Sandbox | None = None
) -> SolverResult:
    return HornRunner(sandbox, limits).run(program)


def run_asp(
    program: str, *, limits: SolverLimits | None = None, sandbox: Sandbox | None = None
) -> SolverResult:
    return HornRunner(sandbox, limits).run_asp(program)


def _clingo_paths() -> list[str]:
    import importlib.util

    spec = importlib.util.find_spec("clingo")
    pkg = [str(Path(spec.origin).parent)] if spec and spec.origin else []
    return [sys.executable, _WORKER[-1], *pkg]


def preflight(sandbox: Sandbox) -> EngineCheck:
    """Can the clingo worker run in this sandbox (as its user)? Once per sandbox."""
    paths = _clingo_paths()
    return check_engine(
        sandbox, NAME,
        lambda drop: sandbox.run(
            [*_WORKER, "p.lp", "1"], files={"p.lp": "a."}, limits=PREFLIGHT_LIMITS,
            read=engine_read_paths(*paths), drop=drop,
        ),
        lambda run: run.infra is None and '"status": "sat"' in run.stdout,
        paths,
    )  # fmt: skip


def clingo_version() -> str:
    try:
        import clingo
    except ImportError as exc:
        raise SolverUnavailable(f"clingo: package not importable ({exc})") from exc
    return f"clingo {clingo.__version__} (python worker)"
