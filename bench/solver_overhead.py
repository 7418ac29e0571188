"""Per-solver run time on small programs and the sandbox's own overhead.

Usage: python bench/solver_overhead.py [--runs 20]
Prints medians and p95 in milliseconds. Each solver run is a fresh sandboxed subprocess.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from kgreason.lkg.solvers import (
    Atom,
    HornProgram,
    HornRunner,
    Prover9Runner,
    Rule,
    Sandbox,
    SolverLimits,
    Z3Runner,
)
from kgreason.lkg.solvers.z3 import find_z3

SMT = "(declare-const x Int)(declare-const y Int)(assert (> x 2))(assert (= y (* 2 x)))(check-sat)"
HORN = HornProgram(
    [Atom("Quiet", ("Bob",)), Atom("Cold", ("Bob",))],
    [Rule((Atom("Quiet", ("$x",)), Atom("Cold", ("$x",))), (Atom("Smart", ("$x",)),))],
    Atom("Smart", ("Bob",)),
)


def stats(fn: Callable[[], object], runs: int) -> str:
    fn()  # warm-up
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1000)
    ts.sort()
    return f"median {statistics.median(ts):7.1f} ms   p95 {ts[int(0.95 * (len(ts) - 1))]:7.1f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=20)
    n = ap.parse_args().runs
    limits = SolverLimits(cpu_s=5, memory_mb=1024, wall_s=10)
    box = Sandbox(limits)
    iso = box.isolation()
    print("sandbox: " + "; ".join(iso.layers()))
    z3, p9, horn = Z3Runner(box, limits), Prover9Runner(box, limits), HornRunner(box, limits)
    z3_cmd = find_z3()
    print("plain subprocess /bin/true    ", stats(lambda: subprocess.run(["/bin/true"]), n))
    print("sandboxed /bin/true           ", stats(lambda: box.run(["/bin/true"]), n))
    open_box = Sandbox(limits, isolate_network=False)
    print("sandboxed, no netns /bin/true ", stats(lambda: open_box.run(["/bin/true"]), n))
    print(
        "plain z3 -in (same program)   ",
        stats(
            lambda: subprocess.run([z3_cmd[0], "-in"], input=SMT.encode(), capture_output=True), n
        ),
    )
    print("z3 run (sat + model)          ", stats(lambda: z3.run(SMT), n))
    print(
        "prover9 prove (1 run)         ",
        stats(
            lambda: p9.prove(["all x (man(x) -> mortal(x))", "man(socrates)"], "mortal(socrates)"),
            n,
        ),
    )
    print(
        "prover9 decide (Unknown: 2 runs)",
        stats(lambda: p9.decide(["all x (man(x) -> mortal(x))"], "mortal(socrates)"), n),
    )
    print("horn (clingo worker)          ", stats(lambda: horn.run(HORN), n))
    print(
        "plain python -I -c 'import clingo'",
        stats(lambda: subprocess.run([sys.executable, "-I", "-c", "import clingo"]), n),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
