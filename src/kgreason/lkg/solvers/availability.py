"""Which engines can run here, and how the sandbox isolates them."""

from __future__ import annotations

from kgreason.lkg.solvers.base import SolverError
from kgreason.lkg.solvers.horn import clingo_version
from kgreason.lkg.solvers.prover9 import prover9_version
from kgreason.lkg.solvers.sandbox import Sandbox
from kgreason.lkg.solvers.z3 import z3_version


def available(sandbox: Sandbox | None = None) -> dict[str, str]:
    """Map of "z3", "prover9", "clingo" to a version string or "missing: <reason>", plus
    "sandbox": how processes are isolated (network namespace, user) on this machine."""
    box = sandbox or Sandbox()
    out: dict[str, str] = {}
    for name, probe in (
        ("z3", lambda: z3_version(box)),
        ("prover9", lambda: prover9_version(box)),
        ("clingo", clingo_version),
    ):
        try:
            out[name] = probe()
        except (SolverError, OSError) as exc:
            out[name] = f"missing: {exc}"
    iso = box.isolation()
    net = f"network isolated ({iso.note})" if iso.network_isolated else f"NETWORK OPEN: {iso.note}"
    user = "runs as nobody" if iso.drops_privileges else "runs as the calling user"
    out["sandbox"] = f"{net}; {user}; rlimits cpu/as/core/fsize; private temp dir"
    return out
