"""Per-path Python cost of the path search, old vs new in ONE process (issue 15).

    python bench/pog_paths_python.py --size 10000000 --only 3,12,18 [--base 7bfe41e]
    python bench/pog_paths_python.py --size 10000000 --every 3 [--topics 2]

Loads the path-search modules (pog/lazyhop, fastrestrict, fastpaths, paths, order_free) a
second time from git revision --base under other module names, prepares each question's
graph once (prepare_graph, shared by both), then runs order_free_paths with the base and
the current modules alternately (--repeat times each, best kept), checks the results are
identical (same paths in the same order: repr of every hop, entity lists, bound flag and
reason, expansions) and prints per question: paths, old/new ms, µs per path, ratio, and
the µs per path outside the array expansion of the steps ("py": the stage's time outside
LevelSteps/_RowSteps, which fastsets.py owns: the Python part and the rest) old/new, and the
garbage collector's share (ms, of which a full collection takes most: it walks every
object of the process). --freeze calls gc.freeze() after the store is open (what a
long-running process can do), so collections walk only what the search made.
The machine is shared: the ratio (same process, interleaved) is the figure to trust.
"""

from __future__ import annotations

import argparse
import gc
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
from kgreason.pog import fastpaths, fastsets, order_free
from kgreason.pog.graph import prepare_graph
from kgreason.pog.settings import PoGSettings
from scale_growth import pct

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


class Clock:
    """Time spent in the step expansion (fastsets' array work) and in collections."""

    def __init__(self, mods: list[types.ModuleType]):
        self.steps = self.gc = 0.0
        self._gc0 = 0.0
        for cls in [fastsets.LevelSteps] + [m._RowSteps for m in mods]:
            for name in ("__init__", "steps", "chunks"):
                setattr(cls, name, self._wrap(getattr(cls, name)))
        gc.callbacks.append(self._on_gc)

    def _wrap(self, f: Any) -> Any:
        def timed(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                self.steps += time.perf_counter() - t0

        return timed

    def _on_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc0 = time.perf_counter()
        else:
            self.gc += time.perf_counter() - self._gc0

    def reset(self) -> None:
        self.steps = self.gc = 0.0


def run(
    mod: types.ModuleType, graph: Any, topics: list[str], s: PoGSettings, clock: Clock
) -> tuple[tuple[float, float, float], Any]:
    """((total, outside the step expansion, in collections) seconds, result)."""
    gc.collect()  # each run starts with the same collector state (not timed)
    clock.reset()
    t0 = time.perf_counter()
    res = mod.order_free_paths(
        graph, topics, d_max=s.d_max, max_paths=s.max_paths, reference=topics
    )
    t = time.perf_counter() - t0
    return (t, t - clock.steps, clock.gc), res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="10000000")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-scale"))
    ap.add_argument("--base", default="main", help="git revision of the old modules")
    ap.add_argument("--only", default="", help="question indices")
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--topics", type=int, default=0, help="only questions with this many")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--freeze", action="store_true", help="gc.freeze() after opening")
    args = ap.parse_args()
    base = load_base(args.base)
    clock = Clock([base_fastpaths(), fastpaths])
    d = args.work / f"n{args.size}-s0"
    qs = json.loads((d / "questions.json").read_text())
    idx = [int(x) for x in args.only.split(",")] if args.only else range(0, len(qs), args.every)
    if args.topics:
        idx = [i for i in idx if len(qs[i]["topics"]) == args.topics]
    kg, s = StoreKG(str(d / "store")), PoGSettings()
    if args.freeze:
        gc.collect()
        gc.freeze()
    rows = []
    print(
        f"{'q':>4} {'topics':>6} {'paths':>6} {'old ms':>8} {'new ms':>8} {'old µs/p':>9}"
        f" {'new µs/p':>9} {'ratio':>6} {'py old/new µs/p':>16} {'gc old/new ms':>14} same"
    )
    for i in idx:
        topics = list(qs[i]["topics"])
        prep = run_sync(prepare_graph(kg, topics, s))
        topics = list(prep.topics)
        old, new = [], []
        for _ in range(args.repeat):
            t, r_old = run(base, prep.graph, topics, s, clock)
            old.append(t)
            t, r_new = run(order_free, prep.graph, topics, s, clock)
            new.append(t)
        same = digest(r_old) == digest(r_new)
        n = max(len(r_new.paths), 1)
        o, w = min(old), min(new)  # each (total, outside the steps, gc) of the fastest run
        rows.append((i, len(topics), len(r_new.paths), o, w, same))
        print(
            f"{i:>4} {len(topics):>6} {len(r_new.paths):>6} {o[0] * 1e3:8.1f} {w[0] * 1e3:8.1f}"
            f" {o[0] / n * 1e6:9.2f} {w[0] / n * 1e6:9.2f} {o[0] / w[0]:6.2f}"
            f" {o[1] / n * 1e6:7.2f}/{w[1] / n * 1e6:<8.2f}"
            f" {o[2] * 1e3:6.1f}/{w[2] * 1e3:<7.1f} {same}"
        )
    for k in sorted({r[1] for r in rows}):
        sel = [r for r in rows if r[1] == k]
        o = sorted(r[3][0] * 1e3 for r in sel)
        w = sorted(r[4][0] * 1e3 for r in sel)
        n = sum(r[2] for r in sel)
        py_o, py_w = (sum(r[j][1] for r in sel) / n * 1e6 for j in (3, 4))
        gc_o, gc_w = (sum(r[j][2] for r in sel) * 1e3 for j in (3, 4))
        print(
            f"{k} topic(s), {len(sel)} questions, {n} paths: old p50/p95"
            f" {statistics.median(o):.1f}/{pct(o, 0.95):.1f} ms, new {statistics.median(w):.1f}/"
            f"{pct(w, 0.95):.1f} ms; outside the step expansion {py_o:.2f} -> {py_w:.2f} µs per"
            f" path; gc {gc_o:.0f} -> {gc_w:.0f} ms in all; identical {sum(r[5] for r in sel)}"
            f"/{len(sel)}"
        )


def base_fastpaths() -> types.ModuleType:
    return sys.modules["kgreason.pog._base_fastpaths"]


if __name__ == "__main__":
    main()
