"""Several satisfiability questions against one set of premises, in one Z3 run.

Logic-LM's constraint executors ask Z3 (or python-constraint) one question per option; we
emit a single SMT-LIB script: the declarations and premises, a `(check-sat)` on the
premises alone, then one `(push) (assert q) (check-sat) (pop)` block per question. Z3
prints one verdict per `(check-sat)`, in order, which is how they are matched back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kgreason.lkg.solvers.base import SolverResult
from kgreason.lkg.solvers.z3 import Z3Runner


@dataclass
class ChoiceOutcome:
    """A multiple-choice program's result. `letter` is None when the program did not run
    (`result.ok` is False or `error_kind` is set) or when no option qualified."""

    letter: str | None
    result: SolverResult
    #: the translated SMT-LIB script that ran (also in result.program)
    smt: str = ""
    #: option letter -> True/False (whether that option's test passed)
    per_option: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: a program-level failure our translation detected ("no_solution", "no_option"...)
    error_kind: str | None = None
    error: str | None = None

    @property
    def executed(self) -> bool:
        return self.result.ok and self.error_kind in (None, "no_option")


def build_script(decls: Sequence[str], premises: Sequence[str], queries: Sequence[str]) -> str:
    lines = [*decls, *(f"(assert {p})" for p in premises), "(check-sat)"]
    for q in queries:
        lines += ["(push 1)", f"(assert {q})", "(check-sat)", "(pop 1)"]
    return "\n".join(lines) + "\n"


def run_queries(
    runner: Z3Runner, decls: Sequence[str], premises: Sequence[str], queries: Sequence[str]
) -> tuple[SolverResult, str | None, list[str]]:
    """Returns (result, verdict of the premises alone, one verdict per query). On failure
    the verdicts are None / []."""
    script = build_script(decls, premises, queries)
    res = runner.run(script, auto_model=False)
    verdicts = list(res.details.get("check_sat", []))  # type: ignore[call-overload]
    if not res.ok:
        return res, None, []
    if len(verdicts) != len(queries) + 1:
        res.status, res.error_kind = "crash", "crash"
        res.error = f"expected {len(queries) + 1} check-sat answers, got {len(verdicts)}"
        return res, None, []
    res.verdict = verdicts[0]
    return res, verdicts[0], verdicts[1:]
