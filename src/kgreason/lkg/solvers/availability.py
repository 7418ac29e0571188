"""Which engines can run here, and how the sandbox isolates them (what `doctor` shows)."""

from __future__ import annotations

from kgreason.lkg.solvers.base import SolverError
from kgreason.lkg.solvers.registry import SolverRegistry, default_solvers
from kgreason.lkg.solvers.sandbox import Sandbox


def available(
    sandbox: Sandbox | None = None, solvers: SolverRegistry | None = None
) -> dict[str, str]:
    """Map of each registered solver's engine ("z3", "prover9", "clingo", ...) to a version
    string, "unavailable: <reason>" or "missing: <reason>", plus "sandbox": the isolation
    layers active on this machine.

    Each engine goes through the same preflight as a real run (as the sandbox user), so a
    version printed here means programs can run; a degraded engine's warning is appended."""
    box = sandbox or Sandbox()
    out: dict[str, str] = {}
    for solver in solvers or default_solvers():
        name = solver.engine
        try:
            c = solver.preflight(box)
            if not c.ok:
                out[name] = (
                    c.detail if c.detail.startswith("unavailable") else f"unavailable: {c.detail}"
                )
                continue
            version = solver.version(box)
            out[name] = version + (f" [warning: {c.detail}]" if c.status == "degraded" else "")
        except (SolverError, OSError) as exc:
            text = str(exc)
            out[name] = text if text.startswith("unavailable") else f"missing: {text}"
    iso = box.isolation()
    out["sandbox"] = "; ".join([*iso.layers(), *iso.notes])
    return out
