"""Embedded store vs SPARQL (pyoxigraph) on a deterministic skewed synthetic KG.

    python bench/kg_bench.py                 # 1M and 10M triples
    python bench/kg_bench.py --sizes 1000000 # one size
    python bench/kg_bench.py --quick         # 100k triples, fewer repetitions

Prints build time, store size, open time and, as median / p95 in ms, 1-hop neighbours of 1
and 100 entities, 3-hop expansion from 2-3 seeds bounded at --max-triples, and simple paths
of length <= 3 and <= 6 between 2 and 3 entities (capped at --max-paths per pair). The store
is measured twice: "fast" = the numpy node-id layer PoG can use (StoreKG.graph), "API" = the
async KnowledgeGraph methods returning strings. The same operations run through SPARQL on an
on-disk pyoxigraph store loaded with the same triples (path queries in a subprocess with a
timeout, since an unbounded UNION of length-6 patterns can run for very long).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyoxigraph as ox

from kg_bench_sparql import (
    NOISE_RELS,
    NS,
    sparql_expand,
    sparql_neighbors,
    sparql_paths,
)
from kgreason.kg.loaders import Source
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store.paths import find_paths


# --- synthetic graph --------------------------------------------------------------------
def synth(n_triples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Heads and tails drawn from Zipf-like node popularity (different orders for heads and
    tails), 200 relations with skewed frequency, ~5% Freebase-style noise relations."""
    rng = np.random.default_rng(seed)
    n_nodes = max(1000, n_triples // 10)

    def zipf(alpha: float) -> np.ndarray:
        w = 1.0 / np.arange(1, n_nodes + 1) ** alpha
        perm = rng.permutation(n_nodes)
        return perm[rng.choice(n_nodes, size=n_triples, p=w / w.sum())]

    heads, tails = zipf(0.75), zipf(0.95)
    rw = 1.0 / np.arange(1, 201) ** 1.1
    rels = rng.choice(200, size=n_triples, p=rw / rw.sum())
    noise = rng.random(n_triples) < 0.05
    rels[noise] = 200 + (rng.random(int(noise.sum())) < 0.5)
    rel_names = [f"r{i}" for i in range(200)] + list(NOISE_RELS)
    return heads, rels, tails, rel_names


def write_files(d: Path, h, r, t, rel_names: list[str], with_nt: bool = True) -> tuple[Path, Path]:
    tsv, nt = d / "kg.tsv", d / ("kg.nt" if with_nt else "kg.nt.skipped")
    with open(tsv, "w") as ft, open(nt, "w") as fn:
        for a in range(0, len(h), 1_000_000):
            rows = zip(
                h[a : a + 1_000_000].tolist(),
                r[a : a + 1_000_000].tolist(),
                t[a : a + 1_000_000].tolist(),
                strict=True,
            )
            rows = [(x, rel_names[y], z) for x, y, z in rows]
            ft.write("".join(f"e{x}\t{y}\te{z}\n" for x, y, z in rows))
            if with_nt:
                fn.write("".join(f"<{NS}e{x}> <{NS}{y}> <{NS}e{z}> .\n" for x, y, z in rows))
    return tsv, nt


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


# --- timing -----------------------------------------------------------------------------
def stats(samples_s: list[float]) -> tuple[float, float]:
    ms = sorted(x * 1000 for x in samples_s)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return statistics.median(ms), p95


def timed(fn: Callable, args: list) -> tuple[float, float]:
    out = []
    for a in args:
        t0 = time.perf_counter()
        fn(a)
        out.append(time.perf_counter() - t0)
    return stats(out)


def atimed(fn: Callable, args: list) -> tuple[float, float]:
    async def run() -> list[float]:
        out = []
        for a in args:
            t0 = time.perf_counter()
            await fn(a)
            out.append(time.perf_counter() - t0)
        return out

    return stats(asyncio.run(run()))


# --- the run ----------------------------------------------------------------------------
def walk_from(kg: StoreKG, node: int, steps: int, rng: np.random.Generator) -> int:
    for _ in range(steps):
        nb = kg.graph.edges(np.array([node])).nbr
        node = int(nb[rng.integers(len(nb))]) if len(nb) else node
    return node


def row(name: str, fast, api, sparql, note: str = "") -> None:
    def f(x):
        return "n/a" if x is None else f"{x[0]:9.3f} {x[1]:9.3f}"

    ratio = f"{sparql[0] / api[0]:8.1f}x" if sparql and api and api[0] > 0 else "      -"
    print(f"{name:34s} {f(fast):>19s} {f(api):>19s} {f(sparql):>19s} {ratio} {note}")


def bench_size(n_triples: int, args: argparse.Namespace, work: Path) -> None:
    print(f"\n=== {n_triples:,} triples ===")
    d = work / f"n{n_triples}"
    d.mkdir()
    t0 = time.perf_counter()
    h, r, t, rel_names = synth(n_triples, args.seed)
    tsv, nt = write_files(d, h, r, t, rel_names, with_nt=n_triples <= args.sparql_max)
    del h, r, t
    print(f"generated files in {time.perf_counter() - t0:.1f} s ({du(d) / 1e6:.0f} MB)")
    t0 = time.perf_counter()
    build_store([Source(tsv)], d / "store")
    build_s = time.perf_counter() - t0
    opens = []
    for _ in range(5):
        t0 = time.perf_counter()
        kg = StoreKG(d / "store")
        opens.append(time.perf_counter() - t0)
    c = kg.manifest.counts
    print(
        f"store: build {build_s:.1f} s, {du(d / 'store') / 1e6:.0f} MB on disk, open median "
        f"{stats(opens)[0]:.2f} ms (p95 {stats(opens)[1]:.2f}); {c['triples']:,} distinct triples, "
        f"{c['entities']:,} entities, max degree {int(np.diff(np.asarray(kg.graph.fwd_ptr)).max() + np.diff(np.asarray(kg.graph.rev_ptr)).max())} (out+in bound)"
    )
    oxi = None
    if n_triples <= args.sparql_max:
        t0 = time.perf_counter()
        oxi_dir = d / "oxigraph"
        oxi = ox.Store(str(oxi_dir))
        oxi.bulk_load(path=str(nt), format=ox.RdfFormat.N_TRIPLES)
        oxi.flush()
        print(
            f"pyoxigraph: bulk load {time.perf_counter() - t0:.1f} s, {du(oxi_dir) / 1e6:.0f} MB on disk"
        )
    else:
        print(f"pyoxigraph: skipped above --sparql-max={args.sparql_max:,} triples")
    tsv.unlink()

    rng = np.random.default_rng(args.seed + 1)
    n = kg.graph.n_nodes
    reps = args.reps
    keys = kg.index.keys
    one = [[int(x)] for x in rng.integers(0, n, reps)]
    hundred = [rng.integers(0, n, 100) for _ in range(reps)]
    seeds = [rng.integers(0, n, 2 + i % 2) for i in range(reps)]
    print(
        f"{'operation (ms)':34s} {'store fast med/p95':>19s} {'store API med/p95':>19s} {'SPARQL med/p95':>19s}  SPARQL/API"
    )
    for label, sets in (("1-hop, 1 entity", one), ("1-hop, 100 entities", hundred)):
        ks = [keys.many(s) for s in sets]
        fast = timed(lambda s: kg.graph.edges(np.asarray(s)), sets)
        api = atimed(kg.neighbors, ks)
        sp = timed(lambda k: sparql_neighbors(oxi, k), ks) if oxi else None
        row(
            label,
            fast,
            api,
            sp,
            f"(mean {np.mean([len(kg.graph.edges(np.asarray(s)).nbr) for s in sets]):.0f} edges)",
        )
    m = args.max_triples
    ks = [keys.many(s) for s in seeds]
    fast = timed(lambda s: kg.graph.expand(s, 3, m), seeds)
    api = atimed(lambda k: kg.expand(k, 3, max_triples=m), ks)
    sp = timed(lambda k: sparql_expand(oxi, k, 3, m), ks) if oxi else None
    trunc = sum(kg.graph.expand(s, 3, m).truncated for s in seeds)
    row(f"3-hop expand, 2-3 seeds, <= {m}", fast, api, sp, f"({trunc}/{len(seeds)} truncated)")

    groups: list[list[int]] = []
    while len(groups) < args.path_reps:  # entities 2-3 hops apart, all distinct
        e0 = int(rng.integers(0, n))
        group = [e0, walk_from(kg, e0, 3, rng), walk_from(kg, e0, 2, rng)][: 2 + len(groups) % 2]
        if len(set(group)) == len(group):
            groups.append(group)
    for max_len in (3, 6):
        pairs = [list(itertools.combinations(g, 2)) for g in groups]

        def store_paths(ps, max_len=max_len):
            return [find_paths(kg.graph, a, b, max_len, max_paths=args.max_paths) for a, b in ps]

        results = [store_paths(ps) for ps in pairs]
        found = [sum(len(x.paths) for x in rs) for rs in results]
        capped = sum(any(x.truncated for x in rs) for rs in results)
        fast = timed(store_paths, pairs)
        note = f"(mean {np.mean(found):.0f} paths/group, {capped}/{len(groups)} capped)"
        sparql: dict[str, tuple[float, float] | None] = {"dfs": None, "union": None}
        if oxi is not None:
            kp = [[(keys[a], keys[b]) for a, b in ps] for ps in pairs]
            for kind in ("dfs", "union"):
                samples, counts = [], []
                for ps in kp:
                    got = sparql_paths(
                        oxi_dir, kind, ps, max_len, args.max_paths, args.path_timeout
                    )
                    if got is None:
                        break
                    samples.append(got[0])
                    counts.append(got[1])
                if len(samples) == len(kp):
                    sparql[kind] = stats(samples)
                    note += f"; {kind}: counts equal {counts == found}"
                else:
                    note += (
                        f"; {kind}: group {len(samples) + 1} > {args.path_timeout:.0f} s, stopped"
                    )
        dfs, union = sparql["dfs"], sparql["union"]
        row(f"paths <= {max_len}, SPARQL client DFS", fast, fast, dfs, note)
        row(f"paths <= {max_len}, SPARQL one UNION query", fast, fast, union)
    print(
        f"peak RSS so far {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (shared machine)"
    )
    shutil.rmtree(d, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--quick", action="store_true", help="100k triples, fewer repetitions")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--path-reps", type=int, default=6)
    ap.add_argument("--max-triples", type=int, default=10_000)
    ap.add_argument("--max-paths", type=int, default=1000)
    ap.add_argument("--path-timeout", type=float, default=30.0)
    ap.add_argument(
        "--sparql-max", type=int, default=1_000_000, help="largest size also loaded into pyoxigraph"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.reps, args.path_reps = [100_000], 20, 4
    work = Path(tempfile.mkdtemp(prefix="kg_bench-", dir=args.workdir))
    print(
        f"kg_bench: python {sys.version.split()[0]}, numpy {np.__version__}, pyoxigraph {ox.__version__}"
    )
    try:
        for size in args.sizes:
            bench_size(size, args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
