"""Per-path Python cost of the path search, old vs new in ONE process (issue 15).

    python bench/pog_paths_python.py --size 10000000 --only 3,12,18 [--base 7bfe41e]
    python bench/pog_paths_python.py --size 10000000 --every 3 [--topics 2]

Loads the path-search modules (pog/lazyhop, fastrestrict, fastpaths, paths, order_free) a
second time from git revision --base under other module names, prepares each question's
graph once (prepare_graph, shared by both), then runs order_free_paths with the base and
the current modules alternately (--repeat times each, best kept), checks the results are
identical (same paths in the same order: repr of every hop, entity lists, bound flag and
reason, expansions) and prints per question: paths, old/new ms, µs per path, ratio, the
old/new ms of the per-path parts (SHOWN: restrict, kept_members, find_entity_paths'
tail, order_free's orientation and dedup, oriented_paths, HopMaker's bulk methods), and
the µs per path outside the array expansion of the steps ("py": the stage's time outside
LevelSteps/_RowSteps, which fastsets.py owns: the Python part and the rest) old/new, and the
garbage collector's share (ms, of which a full collection takes most: it walks every
object of the process). --freeze calls gc.freeze() after the store is open (what a
long-running process can do), so collections walk only what the search made.
The machine is shared: the ratio (same process, interleaved) is the figure to trust, and
--cpu times by the thread's CPU time, which leaves out the waits for a core.
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
from kgreason.heap import warm_all
from kgreason.kg.store import StoreKG
from kgreason.pog import order_free
from kgreason.pog.arrays import search as fastpaths
from kgreason.pog.arrays import steps as fastsets
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


#: components timed inside the stage: (label, module of MODULES, attribute), each wrapped
#: in the base and the current modules alike (a few dozen calls a question: the wrapper
#: costs nothing measurable)
PARTS = (
    ("search", "paths", "find_entity_paths"),
    ("arrays", "fastpaths", "free_paths"),
    ("arrays", "fastpaths", "segment_paths"),
    ("restrict", "fastrestrict", "restrict"),
    ("kept", "fastrestrict", "kept_members"),
    ("opaths", "order_free", "oriented_paths"),
    ("maker", "lazyhop", "HopMaker.groups"),
    ("maker", "lazyhop", "HopMaker.sets"),
    ("maker", "lazyhop", "HopMaker.hops"),
)
#: printed per question: restrict (with kept_members), find_entity_paths outside the
#: array search (combining, sorting, making ReasoningPaths), order_free's orientation and
#: dedup (the stage outside the searches and oriented_paths), oriented_paths, HopMaker
SHOWN = ("restrict", "kept", "tail", "orient", "opaths", "maker")


class Clock:
    """Time spent in the step expansion (fastsets' array work), in collections, and in
    the components of PARTS (per module set: `parts[label]`)."""

    def __init__(
        self,
        mods: list[types.ModuleType],
        sets: list[dict[str, types.ModuleType]],
        now: Any = time.perf_counter,
    ):
        self.now = now  # wall clock, or this thread's CPU time (--cpu)
        self.steps = self.gc = 0.0
        self._gc0 = 0.0
        self.parts: dict[str, float] = {}
        for cls in [fastsets.LevelSteps] + [m._RowSteps for m in mods]:
            for name in ("__init__", "steps", "chunks"):
                setattr(cls, name, self._wrap(getattr(cls, name)))
        for mods_by_name in sets:
            for label, mod, attr in PARTS:
                self._patch(mods_by_name, mod, attr, label)
        gc.callbacks.append(self._on_gc)

    def _patch(self, mods: dict[str, types.ModuleType], mod: str, attr: str, label: str) -> None:
        """Wrap mods[mod].attr, and every name in `mods` bound to the same function."""
        owner: Any = mods[mod]
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        f = getattr(owner, name)
        is_static = isinstance(vars(owner).get(name), staticmethod) if path else False
        w = self._wrap(f, label)
        setattr(owner, name, staticmethod(w) if is_static else w)
        for m in mods.values():
            for k, v in list(vars(m).items()):
                if v is f:
                    setattr(m, k, w)

    def _wrap(self, f: Any, label: str = "") -> Any:
        def timed(*a: Any, **k: Any) -> Any:
            t0 = self.now()
            try:
                return f(*a, **k)
            finally:
                t = self.now() - t0
                if label:
                    self.parts[label] = self.parts.get(label, 0.0) + t
                else:
                    self.steps += t

        return timed

    def _on_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc0 = self.now()
        else:
            self.gc += self.now() - self._gc0

    def reset(self) -> None:
        self.steps = self.gc = 0.0
        self.parts = {}

    def shown(self, total: float) -> dict[str, float]:
        """SHOWN's figures (seconds) of the run just timed."""
        p = self.parts
        out = {k: p.get(k, 0.0) for k in ("restrict", "kept", "opaths", "maker")}
        out["tail"] = p.get("search", 0.0) - p.get("arrays", 0.0)
        out["orient"] = total - p.get("search", 0.0) - p.get("opaths", 0.0) if p else 0.0
        return out


def run(
    mod: types.ModuleType, graph: Any, topics: list[str], s: PoGSettings, clock: Clock
) -> tuple[tuple[float, float, float], Any]:
    """((total, outside the step expansion, in collections, SHOWN parts) seconds,
    result)."""
    gc.collect()  # each run starts with the same collector state (not timed)
    clock.reset()
    t0 = clock.now()
    res = mod.order_free_paths(
        graph, topics, d_max=s.d_max, max_paths=s.max_paths, reference=topics
    )
    t = clock.now() - t0
    return (t, t - clock.steps, clock.gc, clock.shown(t)), res


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
    ap.add_argument(
        "--cold",
        action="store_true",
        help="prepare the graph again before every run (each run builds the graph's lazy "
        "tables, as the first search of a question does)",
    )
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="time by this thread's CPU time (time.thread_time), not the wall clock: on a "
        "shared, loaded machine it leaves out the waits for a core",
    )
    args = ap.parse_args()
    warm_all()  # compiled loops loaded before timing (as bench/pog_scale.py does)
    base = load_base(args.base)
    sets = [{m: sys.modules[f"kgreason.pog.{pre}{m}"] for m in MODULES} for pre in ("_base_", "")]
    clock = Clock(
        [base_fastpaths(), fastpaths], sets, time.thread_time if args.cpu else time.perf_counter
    )
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
            if args.cold:  # a fresh graph per run: its lazily built tables are paid again
                prep = run_sync(prepare_graph(kg, qs[i]["topics"], s))
            t, r_old = run(base, prep.graph, topics, s, clock)
            old.append(t)
            if args.cold:
                prep = run_sync(prepare_graph(kg, qs[i]["topics"], s))
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
        print(
            "      old/new ms: "
            + "  ".join(f"{k} {o[3][k] * 1e3:.1f}/{w[3][k] * 1e3:.1f}" for k in SHOWN)
        )
    for k in sorted({r[1] for r in rows}):
        sel = [r for r in rows if r[1] == k]
        o = sorted(r[3][0] * 1e3 for r in sel)
        w = sorted(r[4][0] * 1e3 for r in sel)
        n = sum(r[2] for r in sel)
        py_o, py_w = (sum(r[j][1] for r in sel) / n * 1e6 for j in (3, 4))
        gc_o, gc_w = (sum(r[j][2] for r in sel) * 1e3 for j in (3, 4))
        parts = "  ".join(
            f"{k} {sum(r[3][3][k] for r in sel) * 1e3 / len(sel):.1f}/"
            f"{sum(r[4][3][k] for r in sel) * 1e3 / len(sel):.1f}"
            for k in SHOWN
        )
        print(f"{k} topic(s), mean ms per question old/new: {parts}")
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
