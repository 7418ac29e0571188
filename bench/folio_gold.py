"""FOLIO validation gold FOL -> kgreason's FOL parser -> Prover9: how many labels reproduce.

Usage: python bench/folio_gold.py [--data PATH] [--cpu 5] [--limit N] [--show-all]
Logic-LM's parser + Prover9 reproduced 178/204 (8 parse failures, 7 prover errors, 11 wrong).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

from kgreason.lkg.logiclm.fol import translate
from kgreason.lkg.solvers import ProgramFormatError, Prover9Runner, Sandbox, SolverLimits

DATA = (
    Path(__file__).resolve().parents[1].parent
    / "shared/data/logic/folio-gold/folio-validation.jsonl"
)
GOLD = {"True": "True", "False": "False", "Uncertain": "Unknown", "Unknown": "Unknown"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--cpu", type=float, default=5.0)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--show-all", action="store_true", help="also list correct records")
    args = ap.parse_args()
    records = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    if args.limit:
        records = records[: args.limit]
    limits = SolverLimits(cpu_s=args.cpu, memory_mb=1024, wall_s=args.cpu * 2 + 2)
    runner = Prover9Runner(Sandbox(limits), limits)
    outcome: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    times: list[float] = []
    failures: list[str] = []
    for i, rec in enumerate(records):
        gold = GOLD[rec["label"]]
        try:
            prob = translate(rec["premises-FOL"], rec["conclusion-FOL"])
        except ProgramFormatError as exc:
            outcome["parse_error"] += 1
            kinds[f"parse:{exc.kind}"] += 1
            failures.append(f"#{i:3d} parse_error[{exc.kind}] gold={gold}: {exc}")
            continue
        res = runner.decide(prob.premises, prob.conclusion)
        times.append(res.time_s)
        if not res.ok:
            outcome["prover_error"] += 1
            kinds[f"prover:{res.error_kind}"] += 1
            failures.append(f"#{i:3d} {res.status}[{res.error_kind}] gold={gold}: {res.error}")
        elif res.answer == gold:
            outcome["correct"] += 1
            if args.show_all:
                print(f"#{i:3d} ok {gold}")
        else:
            outcome["wrong"] += 1
            note = f" ({'; '.join(prob.notes)})" if prob.notes else ""
            failures.append(f"#{i:3d} wrong: got {res.answer}, gold {gold}{note}")
    n = len(records)
    print(f"FOLIO validation gold FOL via Prover9: reproduced {outcome['correct']}/{n}")
    print(
        f"  parse errors {outcome['parse_error']}, prover errors {outcome['prover_error']}, "
        f"wrong labels {outcome['wrong']}   (Logic-LM: 178/204; 8 / 7 / 11)"
    )
    if times:
        times.sort()
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        print(
            f"  prover time per record (both directions): median {statistics.median(times) * 1000:.1f} ms, "
            f"p95 {p95 * 1000:.1f} ms, max {times[-1]:.2f} s"
        )
    print("  failure kinds:", dict(kinds.most_common()))
    print("failing records:")
    for line in failures:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
