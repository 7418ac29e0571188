"""Old and new graph stages interleaved question by question in ONE process (issue 15).

    python bench/pog_scale_ab.py --baseline-src /path/to/old/checkout/src [--size 10000000]
        [--every 3] [--repeat 3] [--max-topics 1]

Why: on the 2-core measuring VM two runs of the same code differ by 10-25 % at p95, and
bench/pog_scale.py --baseline-src measures the old code in one process and then the new one
in another, so a drift between the two runs reads as a speed-up or a slow-down (a session
24 run showed two-topic questions 0.8x "slower" with code that had not changed). Here the
old checkout's package is copied and renamed (`kgreason` -> `kgreason_old`, imports
rewritten) into a temporary directory, both are imported side by side, and each question
is run by old and new in alternation (`--repeat` times each, the order flipped every
round), each stage's best kept. Prints per-stage p50 / p95 old -> new with ratios and
whether both found the same number of paths. The store comes from bench/pog_scale.py's
cache (--work); both versions open it (the pages are shared).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

STAGES = ("subgraph", "clustering", "reduction", "paths", "total")
_IMPORT = re.compile(r"\bkgreason(?=[.\s]|$)")


def renamed_copy(src: Path, into: Path) -> Path:
    """src/kgreason copied to into/kgreason_old with every `kgreason` module reference in
    its Python files rewritten (imports and dotted names in strings)."""
    dst = into / "kgreason_old"
    shutil.copytree(src / "kgreason", dst, ignore=shutil.ignore_patterns("__pycache__"))
    for f in dst.rglob("*.py"):
        text = f.read_text()
        f.write_text(_IMPORT.sub("kgreason_old", text))
    return dst


def version(pkg: str, store: Path):
    """(run_sync, run(question) -> (times, path count, result kept), store) for one package."""
    aio = importlib.import_module(f"{pkg}.aio")
    graph = importlib.import_module(f"{pkg}.pog.graph")
    order_free = importlib.import_module(f"{pkg}.pog.order_free")
    settings = importlib.import_module(f"{pkg}.pog.settings").PoGSettings()
    kg = importlib.import_module(f"{pkg}.kg.store").StoreKG(store)
    with contextlib.suppress(ImportError, AttributeError):  # a checkout before the kernels
        heap = importlib.import_module(f"{pkg}.heap")
        if hasattr(heap, "warm_all"):
            heap.warm_all()
        else:  # a checkout from before kgreason.jit
            importlib.import_module(f"{pkg}.pog.kernels").warm()
    extra = (
        {"max_level_rows": settings.max_level_rows} if hasattr(settings, "max_level_rows") else {}
    )

    async def run(q: dict):
        t0 = time.perf_counter()
        prep = await graph.prepare_graph(kg, q["topics"], settings)
        t1 = time.perf_counter()
        search = order_free.order_free_paths(
            prep.graph,
            list(prep.topics),
            d_max=settings.d_max,
            max_paths=settings.max_paths,
            reference=list(prep.topics),
            **extra,
        )
        times = dict(prep.timings_s)
        times["paths"] = time.perf_counter() - t1
        times["total"] = time.perf_counter() - t0
        return times, len(search.paths), (prep, search)

    return aio.run_sync, run


def pct(xs: np.ndarray, q: float) -> float:
    return float(np.percentile(xs, q, method="lower")) if len(xs) else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline-src", type=Path, required=True, help="the old checkout's src")
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-scale"))
    ap.add_argument("--every", type=int, default=1, help="every k-th question")
    ap.add_argument("--repeat", type=int, default=3, help="runs per question and version")
    ap.add_argument("--max-topics", type=int, default=0, help="only questions with <= this many")
    args = ap.parse_args()
    d = args.work / f"n{args.size}-s0"
    if not (d / "store").exists():
        sys.exit(f"{d}: no store (build it with bench/pog_scale.py --sizes {args.size})")
    qs = json.loads((d / "questions.json").read_text())[:: args.every]
    if args.max_topics:
        qs = [q for q in qs if len(q["topics"]) <= args.max_topics]
    with tempfile.TemporaryDirectory(prefix="kgreason-ab-") as tmp:
        renamed_copy(args.baseline_src, Path(tmp))
        sys.path.insert(0, tmp)
        runs = {
            "old": version("kgreason_old", d / "store"),
            "new": version("kgreason", d / "store"),
        }
        for sync, run in runs.values():  # first pages of the memory maps, compiled kernels
            sync(run(qs[0]))
        gc.collect()
        gc.freeze()  # as `kgreason serve` does (kgreason.heap)
        rows = []
        kept: dict[str, object] = {}
        for q in qs:
            best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
            count: dict[str, int] = {}
            for r in range(args.repeat):
                for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                    sync, run = runs[name]
                    times, count[name], kept[name] = sync(run(q))  # the last result stays alive
                    for k, v in times.items():
                        best[name][k] = min(best[name].get(k, float("inf")), v)
            rows.append((len(q["topics"]), best, count))
    print(f"=== {d.name}: old ({args.baseline_src}) -> new, interleaved, best of {args.repeat} ===")
    for group, single in (("single", True), ("two-topic", False)):
        sel = [r for r in rows if (r[0] == 1) == single]
        if not sel:
            continue
        same = sum(r[2]["old"] == r[2]["new"] for r in sel)
        print(f"-- {group}: {len(sel)} questions; same number of paths {same}/{len(sel)}")
        for st in STAGES:
            a = np.array([r[1]["old"][st] for r in sel]) * 1e3
            b = np.array([r[1]["new"][st] for r in sel]) * 1e3
            print(
                f"   {st:<11} p50 {pct(a, 50):7.1f} -> {pct(b, 50):7.1f} ms"
                f" ({pct(a, 50) / max(pct(b, 50), 1e-9):4.2f}x)   p95 {pct(a, 95):7.1f} ->"
                f" {pct(b, 95):7.1f} ms ({pct(a, 95) / max(pct(b, 95), 1e-9):4.2f}x)"
            )


if __name__ == "__main__":
    main()
