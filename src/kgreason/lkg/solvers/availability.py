"""Which engines can run here, and how the sandbox isolates them (what `doctor` shows)."""

from __future__ import annotations

from collections.abc import Callable

from kgreason.lkg.solvers import horn, prover9, z3
from kgreason.lkg.solvers.base import SolverError
from kgreason.lkg.solvers.preflight import EngineCheck
from kgreason.lkg.solvers.sandbox import Sandbox


def available(sandbox: Sandbox | None = None) -> dict[str, str]:
    """Map of "z3", "prover9", "clingo" to a version string, "unavailable: <reason>" or
    "missing: <reason>", plus "sandbox": the isolation layers active on this machine.

    Each engine goes through the same preflight as a real run (as the sandbox user), so a
    version printed here means programs can run; a degraded engine's warning is appended."""
    box = sandbox or Sandbox()
    out: dict[str, str] = {}
    probes: list[tuple[str, Callable[[], EngineCheck], Callable[[], str]]] = [
        ("z3", lambda: z3.preflight(box), lambda: z3.z3_version(box)),
        ("prover9", lambda: prover9.preflight(box), lambda: prover9.prover9_version(box)),
        ("clingo", lambda: horn.preflight(box), horn.clingo_version),
    ]
    for name, check, version in probes:
        try:
            c = check()
            if not c.ok:
                out[name] = (
                    c.detail if c.detail.startswith("unavailable") else f"unavailable: {c.detail}"
                )
                continue
            out[name] = version() + (f" [warning: {c.detail}]" if c.status == "degraded" else "")
        except (SolverError, OSError) as exc:
            text = str(exc)
            out[name] = text if text.startswith("unavailable") else f"missing: {text}"
    iso = box.isolation()
    out["sandbox"] = "; ".join([*iso.layers(), *iso.notes])
    return out
