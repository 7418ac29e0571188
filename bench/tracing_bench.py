"""Cost of the tracing hook per stage, against a bare timer in the same process.

    python bench/tracing_bench.py [--n 20000]

Prints microseconds per stage for: the old hand-written timer (perf_counter around the
body), `Tracer.stage` with logging off (the default), with a callback, and with -vv logging
to a null stream; and the ratio of each to the bare timer. Per question there are five PoG
stages (four SymbolLKG), so the hook's cost per question is about five times the figure.
"""

from __future__ import annotations

import argparse
import io
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kgreason.llm.usage import UsageLedger
from kgreason.tracing import StageEvent, Tracer


def bare(n: int) -> float:
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        timings["s"] = timings.get("s", 0.0) + time.perf_counter() - t
    return (time.perf_counter() - t0) / n


def traced(n: int, callbacks: list) -> float:
    tr = Tracer("bench", callbacks, ledger=UsageLedger())
    t0 = time.perf_counter()
    for _ in range(n):
        with tr.stage("s", items=3) as st:
            st.size(kept=2)
    return (time.perf_counter() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    n = ap.parse_args().n
    base = bare(n)
    seen: list[StageEvent] = []
    rows = [("bare timer (before)", base), ("Tracer.stage, logging off", traced(n, []))]
    rows.append(("Tracer.stage + callback", traced(n, [seen.append])))
    log = logging.getLogger("kgreason")
    handler = logging.StreamHandler(io.StringIO())
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    rows.append(("Tracer.stage, -vv logging", traced(n, [])))
    for name, s in rows:
        print(f"{name:28s} {s * 1e6:8.2f} us/stage  x{s / base:6.1f}")


if __name__ == "__main__":
    main()
