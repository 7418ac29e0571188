"""Per-path Python cost of the path search, old vs new in ONE process (issue 15).

    python bench/pog_paths_python.py --size 10000000 --only 3,12,18 [--base 7bfe41e]
    python bench/pog_paths_python.py --size 10000000 --every 3 [--topics 2]

Loads the path-search modules (pog/lazyhop, fastrestrict, fastpaths, paths, order_free) a
second time from git revision --base under other module names, prepares each question's
graph once (prepare_graph, shared by both), then runs order_free_paths with the base and
the current modules alternately (--repeat times each, best kept), checks the results are
identical (same paths in the same order: repr of every hop, entity lists, bound flag and
reason, expansions) and prints per question: paths, old/new ms, µs per path, ratio.
The machine is shared: the ratio (same process, interleaved) is the figure to trust.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

from kgreason.aio import run_sync
from kgreason.kg.store import StoreKG
from kgreason.pog import order_free
from kgreason.pog.graph import prepare_graph
from kgreason.pog.settings import PoGSettings

#: the modules of the search, in import order (each imports only earlier ones of these)
MODULES = ("lazyhop", "fastrestrict", "fastpaths", "paths", "order_free")
ROOT = Path(__file__).resolve().parents[1]


def load_base(rev: str) -> types.ModuleType:
    """order_free (and what it imports of MODULES) as of `rev`, as kgreason.pog._base_*."""
    mods: dict[str, types.ModuleType] = {}
    for name in MODULES:
        src = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:src/kgreason/pog/{name}.py"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for other in MODULES:
            src = src.replace(f"kgreason.pog.{other} ", f"kgreason.pog._base_{other} ")
            src = src.replace(f"kgreason.pog.{other}\n", f"kgreason.pog._base_{other}\n")
        src = src.replace(
            "from kgreason.pog import fastpaths",
            "from kgreason.pog import _base_fastpaths as fastpaths",
        )
        full = f"kgreason.pog._base_{name}"
        mod = types.ModuleType(full)
        mod.__file__ = f"<{rev}:{name}.py>"
        sys.modules[full] = mod
        setattr(sys.modules["kgreason.pog"], f"_base_{name}", mod)
        exec(compile(src, mod.__file__, "exec"), mod.__dict__)
        mods[name] = mod
    return mods["order_free"]


def digest(res: Any) -> tuple:
    return (
        [(tuple(repr(h) for h in p.hops), p.entity_list) for p in res.paths],
        res.bound_hit,
        res.bound_reason,
        res.expansions,
    )


def run(mod: types.ModuleType, graph: Any, topics: list[str], s: PoGSettings) -> tuple[float, Any]:
    t0 = time.perf_counter()
    res = mod.order_free_paths(
        graph, topics, d_max=s.d_max, max_paths=s.max_paths, reference=topics
    )
    return time.perf_counter() - t0, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="10000000")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-scale"))
    ap.add_argument("--base", default="main", help="git revision of the old modules")
    ap.add_argument("--only", default="", help="question indices")
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--topics", type=int, default=0, help="only questions with this many")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    base = load_base(args.base)
    d = args.work / f"n{args.size}-s0"
    qs = json.loads((d / "questions.json").read_text())
    idx = [int(x) for x in args.only.split(",")] if args.only else range(0, len(qs), args.every)
    if args.topics:
        idx = [i for i in idx if len(qs[i]["topics"]) == args.topics]
    kg, s = StoreKG(str(d / "store")), PoGSettings()
    rows = []
    print(
        f"{'q':>4} {'topics':>6} {'paths':>6} {'old ms':>8} {'new ms':>8} {'old µs/p':>9}"
        f" {'new µs/p':>9} {'ratio':>6} same"
    )
    for i in idx:
        topics = list(qs[i]["topics"])
        prep = run_sync(prepare_graph(kg, topics, s))
        topics = list(prep.topics)
        old, new = [], []
        for _ in range(args.repeat):
            t, r_old = run(base, prep.graph, topics, s)
            old.append(t)
            t, r_new = run(order_free, prep.graph, topics, s)
            new.append(t)
        same = digest(r_old) == digest(r_new)
        n = max(len(r_new.paths), 1)
        o, w = min(old), min(new)
        rows.append((i, len(topics), len(r_new.paths), o, w, same))
        print(
            f"{i:>4} {len(topics):>6} {len(r_new.paths):>6} {o * 1e3:8.1f} {w * 1e3:8.1f}"
            f" {o / n * 1e6:9.2f} {w / n * 1e6:9.2f} {o / w:6.2f} {same}"
        )
    for k in sorted({r[1] for r in rows}):
        sel = [r for r in rows if r[1] == k]
        if not sel:
            continue
        o = sorted(r[3] * 1e3 for r in sel)
        w = sorted(r[4] * 1e3 for r in sel)
        p95 = lambda xs: xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]  # noqa: E731
        print(
            f"{k} topic(s), {len(sel)} questions: old p50/p95 {statistics.median(o):.1f}/"
            f"{p95(o):.1f} ms, new {statistics.median(w):.1f}/{p95(w):.1f} ms;"
            f" identical {sum(r[5] for r in sel)}/{len(sel)}"
        )


if __name__ == "__main__":
    main()
