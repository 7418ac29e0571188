"""Old vs new two-topic segment search on the same captured calls, in one process.

    git show <base>:src/kgreason/pog/fastpaths.py > /tmp/fastpaths_base.py
    python bench/pog_paths_ab.py --size 1000000 --base /tmp/fastpaths_base.py [--only 0,15]

Per two-topic question of the synthetic store (bench/pog_scale.py's cache in --work):
prepare_graph, capture the segment_paths calls order_free_paths makes, then run each call
with the current pog/arrays/search.py and with --base, asserting identical results (paths,
order, bound flag and reason, expansion count) and printing both times and their ratio.

    python bench/pog_paths_ab.py --size 10000000 --llm-free 5 [--every 3]
    PYTHONPATH=<old checkout>/src python bench/pog_paths_ab.py --size 10000000 --llm-free 5

LLM-free mode's steps after the graph (paths, names, the texts the fuzzy stage embeds; see
llm_free_stages) on the first N single-topic questions (every --every-th), with whatever
`kgreason` is on the path: run it once per checkout to compare.
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
from kgreason.pog import paths
from kgreason.pog.arrays import search as fastpaths
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
                b = paths.Budget(max_paths)
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
    """What LLM-free mode (pog/llm_free.explore_llm_free) does after the graph stages, up
    to the embedder: paths (order_free_paths), names (displayed_ids + NameBook.ensure) and
    render (the texts FuzzySelector.rank embeds). The embedding itself is left out: this
    change does not touch it, and MiniLM on 10^4 texts takes minutes on a shared machine."""
    from kgreason.pog.fuzzy import EMBED_MAX_ITEMS
    from kgreason.pog.render import NameBook, displayed_ids, render_path

    try:  # what FuzzySelector.rank renders with (absent from older checkouts)
        from kgreason.pog.render import render_paths
    except ImportError:
        render_paths = None

    d = args.work / f"n{args.size}-s0"
    qs = json.loads((d / "questions.json").read_text())
    one = [q for q in qs if len(q["topics"]) == 1][:: args.every][: args.llm_free]
    settings, kg = PoGSettings(), StoreKG(d / "store")
    stages = ("paths", "names", "render")

    async def one_question(q: dict) -> tuple[list[float], int]:
        # (asyncio.run reprs its result: keep the paths inside)
        prep = await prepare_graph(kg, q["topics"], settings)
        t0 = time.perf_counter()
        search = order_free_paths(
            prep.graph, list(prep.topics), d_max=settings.d_max, max_paths=settings.max_paths
        )
        t1 = time.perf_counter()
        book = NameBook(kg)
        await book.ensure(displayed_ids(search.paths))
        t2 = time.perf_counter()
        if render_paths is not None:
            texts = render_paths(
                search.paths, book.names, max_items=EMBED_MAX_ITEMS, with_ids=False
            )
        else:
            texts = [
                render_path(p, book.names, max_items=EMBED_MAX_ITEMS, with_ids=False)
                for p in search.paths
            ]
        t3 = time.perf_counter()
        assert len(texts) == len(search.paths)
        return [(t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000], len(search.paths)

    rows = []
    for q in one:
        times, n = asyncio.run(one_question(q))
        rows.append(times)
        shown = " ".join(f"{s} {x:.0f} ms" for s, x in zip(stages, times, strict=True))
        print(f"{q['topics'][0]} paths={n} {shown}", flush=True)
    for j, s in enumerate(stages):
        print(f"{s:<6} median {statistics.median(r[j] for r in rows):7.0f} ms over {len(rows)}")


if __name__ == "__main__":
    main()
