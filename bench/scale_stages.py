"""PoG's graph preparation stages (subgraph, clustering, reduction) on a scale store, old vs
new code in ONE process, question by question, alternating which runs first.

    python bench/scale_stages.py --store /tmp/kgreason-scale/n10000000-s0 --baseline-src ../main/src
    python bench/scale_stages.py --store ... --baseline-src ... --every 3 --reps 3

Why a separate bench (issue 15): this machine is shared, so two processes measured one
after the other (bench/pog_scale.py --baseline-src) see different loads. Here the baseline
checkout is copied into a temporary directory as the package `kgreason_base` (imports
rewritten), so both versions run interleaved in one process on the same store files.
Per stage it prints p50 / p95 over the questions of the first call of each question
("cold": what a server sees for a new question) and of the fastest of the later calls
("warm"), with old/new ratios, and checks that both versions build the same graph (every
CSR array, the stats, the bounds hit, the subgraph's edge ids).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

STAGES = ("subgraph", "clustering", "reduction", "paths")  # paths: --with-paths only
ARRAYS = ("h", "r", "t", "idst", "irel", "isrc", "optr", "iptr", "present")


def load_baseline(src: Path, tmp: Path) -> Any:
    """The baseline's kgreason package, importable as `kgreason_base` beside ours."""
    dst = tmp / "kgreason_base"
    shutil.copytree(src / "kgreason", dst, ignore=shutil.ignore_patterns("__pycache__"))
    pat = re.compile(r"\bkgreason(?=[.\s])")
    for f in dst.rglob("*.py"):
        text = f.read_text()
        f.write_text(pat.sub("kgreason_base", text))
    sys.path.insert(0, str(tmp))
    return importlib.import_module("kgreason_base")


def runner(pkg: str, store: Path, with_paths: bool) -> Any:
    kg = importlib.import_module(f"{pkg}.kg.store").StoreKG(store / "store")
    prep = importlib.import_module(f"{pkg}.pog.graph").prepare_graph
    run_sync = importlib.import_module(f"{pkg}.aio").run_sync
    settings = importlib.import_module(f"{pkg}.pog.settings").PoGSettings()
    paths = importlib.import_module(f"{pkg}.pog.order_free").order_free_paths

    def run(topics: list[str]) -> Any:
        p = run_sync(prep(kg, topics, settings))
        if with_paths:  # timed apart ("paths", not in the sums): the heap a real question leaves
            t = list(p.topics)
            t0 = time.perf_counter()
            paths(p.graph, t, d_max=settings.d_max, max_paths=settings.max_paths, reference=t)
            p.timings_s["paths"] = time.perf_counter() - t0
        return p

    return run


def same_graph(a: Any, b: Any) -> bool:
    ga, gb = a.graph, b.graph
    return (
        all(np.array_equal(getattr(ga, x), getattr(gb, x)) for x in ARRAYS)
        and vars(a.stats) == vars(b.stats)
        and a.bounds_hit == b.bounds_hit
        and np.array_equal(a.subgraph.triples.eids, b.subgraph.triples.eids)
    )


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True, help="a scale dir: store/, questions.json")
    ap.add_argument("--baseline-src", type=Path, required=True, help="src dir of the old code")
    ap.add_argument("--every", type=int, default=3, help="every k-th question")
    ap.add_argument("--reps", type=int, default=3, help="calls per question and version")
    ap.add_argument(
        "--with-paths",
        action="store_true",
        help="also run the (untimed) path search after each call, as a question would",
    )
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    qs = json.loads((args.store / "questions.json").read_text())[:: args.every]
    with tempfile.TemporaryDirectory() as tmp:
        load_baseline(args.baseline_src, Path(tmp))
        run = {
            who: runner(pkg, args.store, args.with_paths)
            for who, pkg in (("old", "kgreason_base"), ("new", "kgreason"))
        }
        for pkg in ("kgreason_base", "kgreason"):  # compiled kernels loaded before timing
            with contextlib.suppress(ImportError):  # a baseline from before pog/kernels
                importlib.import_module(f"{pkg}.pog.kernels").warm()
        # rows[(version, kind, mode)] = per question, the stage times (ms)
        rows: dict[tuple[str, str, str], list[list[float]]] = {}
        same = 0
        for i, q in enumerate(qs):
            kind = "two-topic" if len(q["topics"]) > 1 else "single"
            times: dict[str, list[list[float]]] = {"old": [], "new": []}
            first: dict[str, Any] = {}
            for rep in range(args.reps):
                for who in ("old", "new") if (i + rep) % 2 == 0 else ("new", "old"):
                    p = run[who](q["topics"])
                    first.setdefault(who, p)
                    times[who].append([p.timings_s.get(s, 0.0) * 1e3 for s in STAGES])
            same += same_graph(first["old"], first["new"])
            for who, ts in times.items():
                rows.setdefault((who, kind, "cold"), []).append(ts[0])
                warm = min(ts[1:], key=sum) if len(ts) > 1 else ts[0]
                rows.setdefault((who, kind, "warm"), []).append(warm)
    print(
        f"{args.store.name}: {len(qs)} questions, same graph {same}/{len(qs)}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    for kind in ("single", "two-topic"):
        for mode in ("cold", "warm"):
            old, new = rows.get(("old", kind, mode)), rows.get(("new", kind, mode))
            if not old or not new:
                continue
            print(f"-- {kind}, {mode} ({len(old)} questions), ms p50 / p95")
            sums = {"subgraph+clustering": (0, 1), "all three": (0, 1, 2)}
            cols = {s: (j,) for j, s in enumerate(STAGES) if s != "paths" or args.with_paths}
            cols |= sums
            for name, idx in cols.items():
                o = [sum(r[j] for j in idx) for r in old]
                n = [sum(r[j] for j in idx) for r in new]
                if pct(n, 95) < 0.05:  # (reduction of one topic: nothing to do)
                    print(
                        f"   {name:20s} old {pct(o, 50):6.1f} / {pct(o, 95):6.1f}   new {pct(n, 50):6.1f} / {pct(n, 95):6.1f}"
                    )
                    continue
                per_q = statistics.median(a / max(b, 1e-9) for a, b in zip(o, n, strict=True))
                print(
                    f"   {name:20s} old {pct(o, 50):6.1f} / {pct(o, 95):6.1f}"
                    f"   new {pct(n, 50):6.1f} / {pct(n, 95):6.1f}"
                    f"   old/new {pct(o, 50) / pct(n, 50):4.2f}x / {pct(o, 95) / pct(n, 95):4.2f}x"
                    f"   (per question, median {per_q:4.2f}x)"
                )


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)")
