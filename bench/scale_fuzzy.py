"""LLM-free questions end to end on a synthetic scale store (issue 15): the graph stages,
the names, and fuzzy ranking with a real embedder and `pog.fuzzy_prefilter` (pog/fuzzy.py),
what `kgreason ask --kg STORE --topic T` runs. bench/pog_scale.py times the graph stages
only; a hub question's 20,000 paths made fuzzy ranking the largest cost by far.

    python bench/scale_fuzzy.py --questions 100,10,67 [--embedder minilm] [--prefilter 512]
    python bench/scale_fuzzy.py --every 15 --embedder static

The store comes from bench/pog_scale.py's cache (--work, default /tmp/kgreason-scale; build
it with `bench/pog_scale.py --sizes N` first). Prints per question the path count, how many
paths the transformer embedded, and the seconds of each stage, then p50 / max.

It imports this checkout's src, not an installed kgreason (PYTHONPATH does not change that);
KGREASON_BENCH_SRC=OTHER/src measures another checkout, as bench/pog_scale.py does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(
    0, os.environ.get("KGREASON_BENCH_SRC") or str(Path(__file__).resolve().parents[1] / "src")
)

from kgreason.embed.factory import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.kg.store import StoreKG
from kgreason.pog.fuzzy import FuzzySelector, static_prefilter
from kgreason.pog.llm_free import explore_llm_free
from kgreason.pog.settings import PoGSettings


def question_text(q: dict) -> str:
    """A question naming the topic and the chain's relations (the synthetic set has none)."""
    rels = " then ".join(r.split(".")[1] for r, _ in q["chain"])
    return f"which entity is reached from {' and '.join(q['topics'])} by {rels}"


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-scale"))
    ap.add_argument("--questions", help="question indices, e.g. 100,10,67 (the tail)")
    ap.add_argument("--every", type=int, default=15)
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "static"])
    ap.add_argument("--prefilter", type=int, default=PoGSettings().fuzzy_prefilter)
    args = ap.parse_args()
    d = args.work / f"n{args.size}-s0"
    qs = json.loads((d / "questions.json").read_text())
    idx = (
        [int(i) for i in args.questions.split(",")]
        if args.questions
        else list(range(0, len(qs), args.every))
    )
    kg = StoreKG(d / "store")
    settings = PoGSettings(fuzzy_prefilter=args.prefilter)
    emb = build_embedder(EmbedSettings(backend=args.embedder))
    fuzzy = FuzzySelector(emb, prefilter=static_prefilter(emb), prefilter_top=args.prefilter)
    from kgreason.heap import warm_all

    warm_all()
    print(f"{d.name}: {args.embedder}, pog.fuzzy_prefilter={args.prefilter}")
    rows = []
    for i in idx:
        q = qs[i]
        t0 = time.perf_counter()
        run = await explore_llm_free(kg, fuzzy, settings, q["topics"], question_text(q))
        total = time.perf_counter() - t0
        n = len(run.search.paths)
        pre = fuzzy.prefiltered(n, settings.w1)
        t = run.timings_s
        graph = sum(t[k] for k in ("subgraph", "clustering", "reduction", "paths"))
        rows.append((graph, t["names"], t["fuzzy"], total))
        print(
            f"  q{i}: {n:,} paths, embedded {pre if pre is not None else n:,};"
            f" graph {graph:.2f} s, names {t['names']:.2f} s, fuzzy {t['fuzzy']:.2f} s,"
            f" total {total:.2f} s",
            flush=True,
        )
    for j, name in enumerate(("graph", "names", "fuzzy", "total")):
        xs = [r[j] for r in rows]
        print(f"{name:<6} p50 {statistics.median(xs):7.2f} s   max {max(xs):7.2f} s")


if __name__ == "__main__":
    asyncio.run(main())
