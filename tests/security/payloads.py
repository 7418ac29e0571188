"""The freeze payloads of the hardening report, one per parser family, grown to a size:
shared by tests/security/test_server_freeze.py and bench/server_attacks.py."""

from __future__ import annotations

from typing import Any

from kgreason.server.models import MAX_TEXT


def payloads(n: int = MAX_TEXT) -> list[dict[str, Any]]:
    """The freeze payloads of the report, grown to `n` characters, one per parser family."""

    def fill(unit: str, prefix: str = "", suffix: str = "") -> str:
        k = (n - len(prefix) - len(suffix)) // len(unit)
        return prefix + unit * k + suffix

    return [
        {"program": fill("\n", "x")},
        {"program": fill("\n", "x"), "solver": "asp"},
        {"program": fill("formulas(a)."), "solver": "prover9"},
        {"program": fill("formulas(a).\n")},
        {"program": fill("\n", "Premises:")},
        {"program": fill(" \n", "Query:")},
        {"program": fill("(", "(assert ")},
        {"program": fill(";\n", "(check-sat)")},
        {"program": fill('"', "(echo ")},
        {"program": fill("# Constraints\n")},
        {"program": fill("Domain:\n")},
    ]
