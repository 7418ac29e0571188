"""PoG's graph stages at scale (issue 15): synthetic skewed KGs, LLM-free graph side.

    python bench/pog_scale.py --sizes 1000000,10000000 [--work /tmp/kgreason-scale]
    python bench/pog_scale.py --sizes 10000000 --profile      # cProfile top 10 as well
    python bench/pog_scale.py --sizes 10000000 --repeat 3     # each stage's best of 3 runs
    python bench/pog_scale.py --sizes 10000000 --repeat 3 --passes 3   # ... over 3 passes
    python bench/pog_scale.py --sizes 10000000 --baseline-src ../main/src   # old vs new, one run
    python bench/pog_scale.py --metaqa new.json [--compare old.json]       # MetaQA dev digests
    python bench/pog_scale.py --sizes 10000000 --baseline-bound edge-order  # the two bounds
    python bench/pog_scale.py --sizes 1000000,10000000 --bounds-only       # subgraph step only
    python bench/pog_scale.py --bounds-only --baseline-src ../main/src     # its old / new, one process

Per size: generate the KG (kgreason.kg.synthetic, seed 0) and its questions (105 single-topic,
45 two-topic), build a store (cached in --work), then in a fresh process open the store and
run, per question, what `kgreason ask --kg ... --topic ...` runs before fuzzy ranking:
prepare_graph (subgraph, clustering, reduction) and order_free_paths, after freezing the
warm state as `kgreason serve` does (kgreason.heap; --no-freeze leaves it to the collector,
whose full collections then walk it inside the paths stage). Prints per-stage p50 /
p95 ms, subgraph sizes, how often a bound cut the subgraph / the path search, whether a gold
answer is in the reduced subgraph and on a candidate path, peak RSS (VmHWM of the
measuring process, which only opens the store), and the subgraph step through SPARQL
(pyoxigraph, embedded, same triples, same depth and bound; batched VALUES queries as an
endpoint client) for sizes <= --sparql-max, as a ratio to the store's all-stage time.
Fuzzy ranking (embedder) is not included: it is measured by bench/pog_fuzzy_stage.py.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# --baseline-src runs the measuring process on another checkout's src (e.g. main before a change)
sys.path.insert(
    0, os.environ.get("KGREASON_BENCH_SRC") or str(Path(__file__).resolve().parents[1] / "src")
)


from kgreason.aio import run_sync
from kgreason.kg.loaders import Source
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.synthetic import synth_kg, synth_questions
from kgreason.pog.graph import prepare_graph
from kgreason.pog.order_free import order_free_paths
from kgreason.pog.settings import PoGSettings
from scale_bounds import bounds_old_new, bounds_only
from scale_compare import compare_runs
from scale_growth import STAGES, pct, print_growth
from scale_metaqa import metaqa


def prepare(n: int, seed: int, work: Path, sparql: bool) -> Path:
    """Generate and build once per (size, seed); returns the directory."""
    d = work / f"n{n}-s{seed}"
    have = (d / "store").exists() and (d / "questions.json").exists()
    if have and (not sparql or (d / "oxigraph").exists()):
        return d
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    kg = synth_kg(n, seed)
    qs = synth_questions(kg, 105, 45, seed)
    if not (d / "store").exists():
        kg.write_tsv(d / "kg.tsv")
        build_store([Source(d / "kg.tsv")], d / "store")
    (d / "questions.json").write_text(json.dumps([q.__dict__ for q in qs]))
    if sparql and not (d / "oxigraph").exists():
        import pyoxigraph as ox

        from kg_bench_sparql import NS

        with open(d / "kg.tsv") as f, open(d / "kg.nt", "w") as out:
            for line in f:
                h, r, t = line.rstrip("\n").split("\t")
                out.write(f"<{NS}{h}> <{NS}{r}> <{NS}{t}> .\n")
        store = ox.Store(str(d / "oxigraph"))
        store.bulk_load(path=str(d / "kg.nt"), format=ox.RdfFormat.N_TRIPLES)
        store.flush()
        del store
        (d / "kg.nt").unlink()
    print(f"  prepared {d} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return d


def peak_rss_mb() -> float:
    """VmHWM of this process: unlike ru_maxrss it starts afresh at exec, so the parent's peak
    (generating a 30M KG takes GBs) is not reported as the measuring process's."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class Staged:
    """What run_question returns (run through kgreason.aio.run_sync, whose box keeps
    CPython 3.11's asyncio.run from rendering the lazily named paths)."""

    prep: Any
    search: Any
    times: dict[str, float]


async def run_question(kg: StoreKG, q: dict, settings: PoGSettings) -> Staged:
    """The graph stages, timed; nothing else (the gold checks are `row`'s, outside cProfile)."""
    t0 = time.perf_counter()
    prep = await prepare_graph(kg, q["topics"], settings)
    t1 = time.perf_counter()
    search = order_free_paths(
        prep.graph,
        list(prep.topics),
        d_max=settings.d_max,
        max_paths=settings.max_paths,
        reference=list(prep.topics),
        # a --baseline-src checkout may predate the setting
        **(
            {"max_level_rows": settings.max_level_rows}
            if hasattr(settings, "max_level_rows")
            else {}
        ),
    )
    t2 = time.perf_counter()
    times = dict(prep.timings_s)
    times["paths"] = t2 - t1
    times["total"] = t2 - t0
    return Staged(prep, search, times)


def best(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    """Each stage's (and the total's) faster time of two runs of one question."""
    return {k: min(v, b[k]) for k, v in a.items()}


def row(q: dict, staged: Staged) -> dict:
    prep, search = staged.prep, staged.search
    gold = set(q["answers"])
    # single topic: the answer is in a path's end set; two topics: the generated answer is a
    # neighbour of both, i.e. an entity inside a connecting path (any hop, not a topic)
    ends: set[str] = set()
    for p in search.paths:
        for h in p.hops[-1:] if len(q["topics"]) == 1 else p.hops:
            ends.update(h.dst)
    ends -= set(q["topics"])
    return {
        "times": staged.times,
        "triples": prep.stats.triples,
        "reduced_triples": prep.stats.reduced_triples,
        "cut": bool(prep.bounds_hit),
        "cut_detail": prep.bounds_hit,
        "path_bound": search.bound_hit,
        "level_rows_cut": "max_level_rows" in search.bound_reason,
        "gold_reduced": any(a in prep.graph for a in gold),
        "gold_path": bool(gold & ends),
        # the stricter counts: every gold answer kept / on a path (gold is up to 50 entities)
        "gold_reduced_all": all(a in prep.graph for a in gold),
        "gold_path_all": gold <= ends,
        "n_paths": len(search.paths),
    }


def sparql_subgraph(d: Path, qs: list[dict], settings: PoGSettings) -> list[float]:
    import pyoxigraph as ox

    from kg_bench_sparql import sparql_expand

    store = ox.Store.read_only(str(d / "oxigraph"))
    out = []
    for q in qs:
        t0 = time.perf_counter()
        sparql_expand(store, q["topics"], settings.d_max, settings.max_subgraph_triples)
        out.append(time.perf_counter() - t0)
    return out


def measure(d: Path, args: argparse.Namespace) -> None:
    """Runs in its own process so the peak RSS is the measuring process's own."""
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    qs = json.loads((d / "questions.json").read_text())[:: args.every][: args.limit]
    if args.max_topics:
        qs = [q for q in qs if len(q["topics"]) <= args.max_topics]
    settings = PoGSettings(subgraph_bound=args.bound) if args.bound else PoGSettings()
    kg = StoreKG(d / "store")
    try:  # compiled kernels loaded before timing, as `serve` does
        from kgreason.heap import warm_all
    except ImportError:  # a --baseline-src checkout from before the kernels
        pass
    else:
        print(f"  compiled kernels in use: {warm_all()}", file=sys.stderr)
    run_sync(run_question(kg, qs[0], settings))  # warm the memory maps' first pages
    if not args.no_freeze:  # as `kgreason serve` does once loaded (kgreason.heap)
        gc.collect()
        gc.freeze()
    prof = cProfile.Profile() if args.profile else None
    rows: list[dict] = []
    for n_pass in range(args.passes):  # passes over all questions: best of them per stage
        for i, q in enumerate(qs):
            if prof:
                prof.enable()
            staged = run_sync(run_question(kg, q, settings))
            for _ in range(args.repeat - 1):  # best of k per stage: this VM's runs differ ~15 %
                staged.times = best(staged.times, run_sync(run_question(kg, q, settings)).times)
            if prof:
                prof.disable()
            if n_pass == 0:
                rows.append(row(q, staged))
            else:  # (the same paths: only the times can differ)
                rows[i]["times"] = best(rows[i]["times"], staged.times)
            if args.verbose:
                t = {k: round(v * 1000) for k, v in rows[i]["times"].items()}
                print(f"  q{i} topics={len(q['topics'])} hub={q['hub']} ms={t}", file=sys.stderr)
    rss_mb = peak_rss_mb()
    c = kg.manifest.counts
    if args.summary:
        Path(args.summary).write_text(
            json.dumps({"rows": rows, "rss_mb": rss_mb, "qs": qs, "triples": c["triples"]})
        )
    print(f"\n=== {c['triples']:,} triples, {c['entities']:,} entities ({d.name}) ===")
    groups = {"single": [], "two-topic": []}
    for q, r in zip(qs, rows, strict=True):
        groups["single" if len(q["topics"]) == 1 else "two-topic"].append((q, r))
    for name, grp in groups.items():
        if not grp:
            continue
        rs = [r for _, r in grp]
        print(f"-- {name}: {len(rs)} questions ({sum(q['hub'] for q, _ in grp)} with a hub topic)")
        for st in STAGES:
            xs = [r["times"][st] * 1000 for r in rs]
            print(f"   {st:<11} p50 {pct(xs, 0.5):9.1f} ms   p95 {pct(xs, 0.95):9.1f} ms")
        tri = [r["triples"] for r in rs]
        red = [r["reduced_triples"] for r in rs]
        print(
            f"   subgraph triples p50 {statistics.median(tri):,.0f} p95 {pct(tri, 0.95):,.0f};"
            f" reduced p50 {statistics.median(red):,.0f}"
        )
        print(
            f"   subgraph bound cut: {sum(r['cut'] for r in rs)}/{len(rs)};"
            f" path bound hit: {sum(r['path_bound'] for r in rs)}/{len(rs)}"
            f" (max_level_rows {sum(r.get('level_rows_cut', False) for r in rs)});"
            f" gold in reduced subgraph {sum(r['gold_reduced'] for r in rs)}/{len(rs)};"
            f" gold on a candidate path {sum(r['gold_path'] for r in rs)}/{len(rs)}"
        )
        if "gold_reduced_all" in rs[0]:
            print(
                f"   every gold answer in reduced subgraph"
                f" {sum(r['gold_reduced_all'] for r in rs)}/{len(rs)};"
                f" every gold answer on a candidate path"
                f" {sum(r['gold_path_all'] for r in rs)}/{len(rs)}"
            )
        cuts = [r["cut_detail"] for r in rs if r["cut"]]
        if cuts:
            print(f"   e.g. {cuts[0]}")
    print(f"peak RSS (measuring process): {rss_mb:,.0f} MB")
    if (d / "oxigraph").exists() and args.sparql_limit:
        some = slice(0, args.sparql_limit)  # the embedded SPARQL walk takes seconds per question
        sp = sparql_subgraph(d, qs[some], settings)
        tot = [r["times"]["total"] for r in rows[some]]
        sub = [r["times"]["subgraph"] for r in rows[some]]
        print(f"SPARQL on the first {len(sp)} questions (same questions for the ratios):")
        print(
            f"SPARQL (pyoxigraph) subgraph step p50 {pct(sp, 0.5) * 1000:.1f} ms p95"
            f" {pct(sp, 0.95) * 1000:.1f} ms; ratio SPARQL subgraph / store subgraph (p50)"
            f" {pct(sp, 0.5) / pct(sub, 0.5):.1f}x; / store all stages (p50)"
            f" {pct(sp, 0.5) / pct(tot, 0.5):.1f}x"
        )
    if prof:
        print("cProfile top 10 (tottime):")
        pstats.Stats(prof).sort_stats("tottime").print_stats(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-scale"))
    ap.add_argument("--sparql-max", type=int, default=1_000_000)
    ap.add_argument("--limit", type=int, default=150)
    ap.add_argument(
        "--sparql-limit",
        type=int,
        default=10,
        help="questions also run through embedded SPARQL (0: none)",
    )
    ap.add_argument("--every", type=int, default=1, help="every k-th question (a sample)")
    ap.add_argument(
        "--passes",
        type=int,
        default=1,
        help="passes over all the questions, best of them per question and stage: unlike"
        " --repeat's back-to-back runs, a pause of the VM (other tenants) rarely covers"
        " every pass of one question",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run each question k times in a row and keep each stage's best (default 1)",
    )
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--max-topics", type=int, default=0, help="only questions with <= this many")
    ap.add_argument("-v", "--verbose", action="store_true", help="per-question times")
    ap.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--summary", help=argparse.SUPPRESS)
    ap.add_argument(
        "--no-freeze",
        action="store_true",
        help="leave the warm state to the cyclic collector (the server freezes it)",
    )
    ap.add_argument(
        "--baseline-src",
        help="also measure this src directory (e.g. a checkout of main) on the same questions,"
        " first, and print new/old ratios",
    )
    ap.add_argument(
        "--bound",
        choices=("relation-aware", "edge-order"),
        help="PoGSettings.subgraph_bound for the measured run (default: the settings' default)",
    )
    ap.add_argument(
        "--baseline-bound",
        choices=("relation-aware", "edge-order"),
        help="measure this subgraph_bound first on the same code and questions, as 'old'",
    )
    ap.add_argument(
        "--bounds-only",
        action="store_true",
        help="only the subgraph step, edge-order vs relation-aware, interleaved",
    )
    ap.add_argument("--metaqa", help="MetaQA dev mode: write per-question digests here")
    ap.add_argument("--compare", help="with --metaqa: an earlier --metaqa file")
    args = ap.parse_args()
    if args.metaqa:
        metaqa(args)
        return
    if args.measure:
        measure(args.measure, args)
        return
    measured: dict[int, dict] = {}
    for n in [int(x) for x in args.sizes.split(",")]:
        d = prepare(n, args.seed, args.work, n <= args.sparql_max)
        if args.bounds_only:
            (bounds_old_new if args.baseline_src else bounds_only)(d, args)
            continue
        cmd = [sys.executable, __file__, "--measure", str(d), "--limit", str(args.limit)]
        cmd += ["--every", str(args.every), "--repeat", str(args.repeat)]
        cmd += ["--passes", str(args.passes)]
        cmd += ["-v"] if args.verbose else []
        cmd += ["--max-topics", str(args.max_topics), "--sparql-limit", str(args.sparql_limit)]
        cmd += ["--profile"] if args.profile else []
        cmd += ["--no-freeze"] if args.no_freeze else []
        runs = {}
        old_bound = ["--bound", args.baseline_bound] if args.baseline_bound else []
        new_bound = ["--bound", args.bound] if args.bound else []
        for label, src in (("old", args.baseline_src), ("new", None)):
            if label == "old" and not src and not old_bound:
                continue
            env = dict(os.environ, KGREASON_BENCH_SRC=src or "")
            out = args.work / f"summary-{n}-{label}.json"
            what = f" ({src})" if src else ""
            what += f" bound {(old_bound if label == 'old' else new_bound)[1:]}"
            print(f"--- {label} code{what}")
            bound = old_bound if label == "old" else new_bound
            subprocess.run([*cmd, *bound, "--summary", str(out)], check=True, env=env)
            runs[label] = json.loads(out.read_text())
        if len(runs) == 2:
            compare_runs(runs["old"], runs["new"])
        measured[n] = runs["new"]
    if len(measured) >= 2:
        print_growth(measured)


if __name__ == "__main__":
    main()
