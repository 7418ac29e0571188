"""Old vs new two-topic segment search on the same captured calls, in one process.

    git show <base>:src/kgreason/pog/fastpaths.py > /tmp/fastpaths_base.py
    python bench/pog_paths_ab.py --size 1000000 --base /tmp/fastpaths_base.py [--only 0,15]

Per two-topic question of the synthetic store (bench/pog_scale.py's cache in --work):
prepare_graph, capture the segment_paths calls order_free_paths makes, then run each call
with the current pog/fastpaths.py and with --base, asserting identical results (paths,
order, bound flag and reason, expansion count) and printing both times and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

from kgreason.kg.store import StoreKG
from kgreason.pog import fastpaths, paths
from kgreason.pog.graph import prepare_graph
from kgreason.pog.order_free import order_free_paths
from kgreason.pog.settings import PoGSettings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="1000000")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-scale"))
    ap.add_argument("--base", required=True, help="an older fastpaths.py")
    ap.add_argument("--only", default="", help="indices into the two-topic questions")
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("fastpaths_base", args.base)
    assert spec and spec.loader
    base = importlib.util.module_from_spec(spec)
    sys.modules["fastpaths_base"] = base
    spec.loader.exec_module(base)
    d = args.work / f"n{args.size}-s0"
    qs = json.loads((d / "questions.json").read_text())
    two = [i for i, q in enumerate(qs) if len(q["topics"]) == 2]
    if args.only:
        two = [two[int(j)] for j in args.only.split(",")]
    settings, kg = PoGSettings(), StoreKG(d / "store")
    new_fn, calls = fastpaths.segment_paths, []

    def capture(g, s, t, max_len, budget, avoid):
        calls.append((g, s, t, max_len, budget.max_paths, avoid))
        return []

    fastpaths.segment_paths = capture  # type: ignore[assignment]
    ratios = []
    for qi in two:
        q = qs[qi]
        prep = asyncio.run(prepare_graph(kg, q["topics"], settings))
        calls.clear()
        order_free_paths(
            prep.graph, list(prep.topics), d_max=settings.d_max, max_paths=settings.max_paths
        )
        spent = {"new": 0.0, "old": 0.0}
        for g, s, t, max_len, max_paths, avoid in calls:
            res = {}
            for name, fn in (("new", new_fn), ("old", base.segment_paths)):
                b = paths._Budget(max_paths)
                t0 = time.perf_counter()
                r = fn(g, s, t, max_len, b, avoid)
                spent[name] += time.perf_counter() - t0
                res[name] = (r, b.hit, b.reason, b.expansions)
            assert res["old"] == res["new"], (qi, s, t)
        ratios.append(spent["old"] / max(spent["new"], 1e-9))
        print(
            f"q{qi} hub={q['hub']} nodes={prep.graph.n} calls={len(calls)} old"
            f" {spent['old'] * 1000:.0f} ms new {spent['new'] * 1000:.0f} ms"
            f" ratio {ratios[-1]:.1f}x (identical)",
            flush=True,
        )
    if ratios:
        print(f"median ratio {statistics.median(ratios):.1f}x over {len(ratios)} questions")


if __name__ == "__main__":
    main()
