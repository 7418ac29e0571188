"""Old vs new two-topic segment search on the same captured calls, in one process.

    git show <base>:src/kgreason/pog/fastpaths.py > /tmp/fastpaths_base.py
    python bench/pog_paths_ab.py --size 1000000 --base /tmp/fastpaths_base.py [--only 0,15]

Per two-topic question of the synthetic store (bench/pog_scale.py's cache in --work):
prepare_graph, capture the segment_paths calls order_free_paths makes, then run each call
with the current pog/fastpaths.py and with --base, asserting identical results (paths,
order, bound flag and reason, expansion count) and printing both times and their ratio.

    python bench/pog_paths_ab.py --size 10000000 --llm-free 5 [--every 3]
    PYTHONPATH=<old checkout>/src python bench/pog_paths_ab.py --size 10000000 --llm-free 5

LLM-free mode's stages after the graph (pog/llm_free.explore_llm_free: paths, names, fuzzy
ranking with the configured embedder, a fresh embedding cache per question) on the first N
single-topic questions (every --every-th), with whatever `kgreason` is on the path: run it
once per checkout to compare (the question text is the relation chain and the topic).
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
    ap.add_argument("--base", help="an older fastpaths.py (required without --llm-free)")
    ap.add_argument("--only", default="", help="indices into the two-topic questions")
    ap.add_argument("--llm-free", type=int, default=0, help="N: LLM-free stage times instead")
    ap.add_argument("--every", type=int, default=3)
    args = ap.parse_args()
    if args.llm_free:
        llm_free_stages(args)
        return
    if not args.base:
        ap.error("--base is required (or --llm-free N)")
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


def llm_free_stages(args: argparse.Namespace) -> None:
    from kgreason.embed import build_embedder
    from kgreason.embed.cache import CachedEmbedder
    from kgreason.embed.settings import EmbedSettings
    from kgreason.pog.fuzzy import FuzzySelector
    from kgreason.pog.llm_free import explore_llm_free

    d = args.work / f"n{args.size}-s0"
    qs = json.loads((d / "questions.json").read_text())
    one = [q for q in qs if len(q["topics"]) == 1][:: args.every][: args.llm_free]
    settings, kg = PoGSettings(), StoreKG(d / "store")
    emb = build_embedder(EmbedSettings())
    inner = emb.inner if isinstance(emb, CachedEmbedder) else emb
    stages = ("paths", "names", "fuzzy")
    rows = []

    async def one_question(q: dict) -> tuple[list[float], int, str]:
        # (asyncio.run reprs its result: keep the paths inside)
        question = " ".join(r.split(".")[1] for r, _ in q["chain"]) + f" of [{q['topics'][0]}]"
        sel = FuzzySelector(CachedEmbedder(inner))
        run = await explore_llm_free(kg, sel, settings, q["topics"], question)
        top = run.ranked[0].text[:60] if run.ranked else ""
        return [run.timings_s[s] * 1000 for s in stages], len(run.search.paths), top

    for q in one:
        times, n, top = asyncio.run(one_question(q))
        rows.append(times)
        shown = " ".join(f"{s} {x:.0f} ms" for s, x in zip(stages, times, strict=True))
        print(f"{q['topics'][0]} paths={n} {shown}  top: {top}", flush=True)
    for j, s in enumerate(stages):
        print(f"{s:<6} median {statistics.median(r[j] for r in rows):7.0f} ms over {len(rows)}")


if __name__ == "__main__":
    main()
