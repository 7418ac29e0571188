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
import multiprocessing as mp
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

from kgreason.kg.loaders import Source
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store.paths import find_paths

NS = "http://kg.example/"
NOISE_RELS = ("type.object.type", "common.topic.notable_types")


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


# --- SPARQL side ------------------------------------------------------------------------
def iri(key: str) -> str:
    return f"<{NS}{key}>"


NOISE_FILTER = " && ".join(f'!STRSTARTS(STR(?p), "{NS}{p.split(".")[0]}.")' for p in NOISE_RELS)


def sparql_neighbors(store: ox.Store, keys: list[str]) -> list[tuple[str, str, str]]:
    q = (
        "SELECT ?e ?p ?n ?d WHERE { VALUES ?e { " + " ".join(map(iri, keys)) + " } "
        '{ ?e ?p ?n BIND("tail" AS ?d) } UNION { ?n ?p ?e BIND("head" AS ?d) } '
        f"FILTER({NOISE_FILTER}) }}"
    )
    return [(s["n"].value, s["p"].value, s["d"].value) for s in store.query(q)]


def sparql_expand(store: ox.Store, seeds: list[str], depth: int, max_triples: int) -> int:
    """Level by level with VALUES batches, as an endpoint client does; stops at the bound."""
    seen: set[tuple[str, str, str]] = set()
    visited = {iri(s) for s in seeds}
    frontier = list(visited)
    for _ in range(depth):
        nxt = []
        for i in range(0, len(frontier), 500):
            q = (
                "SELECT ?s ?p ?o WHERE { VALUES ?e { " + " ".join(frontier[i : i + 500]) + " } "
                "{ ?e ?p ?o BIND(?e AS ?s) } UNION { ?s ?p ?e BIND(?e AS ?o) } "
                f"FILTER({NOISE_FILTER}) }} LIMIT {max_triples + 1}"
            )
            for sol in store.query(q):
                tr = (str(sol["s"]), str(sol["p"]), str(sol["o"]))
                if tr not in seen:
                    if len(seen) >= max_triples:
                        return len(seen)
                    seen.add(tr)
                for x in (tr[0], tr[2]):
                    if x not in visited:
                        visited.add(x)
                        nxt.append(x)
        frontier = nxt
    return len(seen)


def path_query(s: str, t: str, max_len: int, limit: int) -> str:
    branches = []
    for n in range(1, max_len + 1):
        nodes = [iri(s), *(f"?x{i}" for i in range(1, n)), iri(t)]
        for dirs in itertools.product((0, 1), repeat=n):
            pats = [
                f"{nodes[i]} ?p{i} {nodes[i + 1]} ."
                if d == 0
                else f"{nodes[i + 1]} ?p{i} {nodes[i]} ."
                for i, d in enumerate(dirs)
            ]
            mids = nodes[1:-1]
            filt = [f"{m} != {e}" for m in mids for e in (iri(s), iri(t))]
            filt += [f"{a} != {b}" for a, b in itertools.combinations(mids, 2)]
            filt += [NOISE_FILTER.replace("?p)", f"?p{i})") for i in range(n)]
            branches.append("{ " + " ".join(pats) + " FILTER(" + " && ".join(filt) + ") }")
    return "SELECT * WHERE { " + " UNION ".join(branches) + f" }} LIMIT {limit}"


def sparql_find_paths(store: ox.Store, s: str, t: str, max_len: int, max_paths: int) -> int:
    """find_paths' algorithm with every neighbour fetch a SPARQL query (a client-side
    search over an endpoint): returns the number of paths found."""

    def fetch(nodes: list[str], limit: int | None = None) -> list[tuple[str, str, str, str]]:
        q = (
            "SELECT ?e ?n ?p ?d WHERE { VALUES ?e { " + " ".join(nodes) + " } "
            '{ ?e ?p ?n BIND("t" AS ?d) } UNION { ?n ?p ?e BIND("h" AS ?d) } '
            f"FILTER({NOISE_FILTER}) }}" + (f" LIMIT {limit}" if limit else "")
        )
        return [(str(x["e"]), str(x["n"]), str(x["p"]), x["d"].value) for x in store.query(q)]

    src, dst = iri(s), iri(t)
    bound, budget = max(0, min(2, max_len - 1)), 100_000  # as find_paths' defaults
    dist, frontier = {dst: 0}, [dst]
    for d in range(1, bound + 1):
        level: dict[str, int] = {}
        rows = 0
        for i in range(0, len(frontier), 500):
            got = fetch(frontier[i : i + 500], limit=budget + 1)
            rows += len(got)
            if rows > budget:
                break
            for _, n, _, _ in got:
                if n not in dist and n not in level:
                    level[n] = d
        if rows > budget:  # like find_paths: a level too wide to scan ends the pruning map
            bound = d - 1
            break
        dist.update(level)
        frontier = list(level)
    cache: dict[str, list[tuple[str, int]]] = {}
    found = 0
    on_path = {src}

    def walk(v: str, depth: int) -> bool:
        nonlocal found
        if v not in cache:
            cache[v] = [(n, dist.get(n, bound + 1)) for _, n, _, _ in fetch([v])]
        remaining = max_len - depth - 1
        for n, lb in cache[v]:
            if lb > remaining:
                continue
            if n == dst:
                found += 1
                if found >= max_paths:
                    return True
            elif remaining > 0 and n not in on_path:
                on_path.add(n)
                stop = walk(n, depth + 1)
                on_path.discard(n)
                if stop:
                    return True
        return False

    if src != dst:
        walk(src, 0)
    return found


def _path_child(
    store_dir: str, kind: str, pairs: list, max_len: int, max_paths: int, out: mp.Queue
) -> None:
    st = ox.Store.read_only(store_dir)
    t0 = time.perf_counter()
    if kind == "union":
        n = sum(len(list(st.query(path_query(a, b, max_len, max_paths)))) for a, b in pairs)
    else:
        n = sum(sparql_find_paths(st, a, b, max_len, max_paths) for a, b in pairs)
    out.put((time.perf_counter() - t0, n))


def sparql_paths(
    store_dir: Path, kind: str, pairs: list, max_len: int, max_paths: int, timeout: float
) -> tuple[float, int] | None:
    """One group's path search in a forked process (pyoxigraph queries cannot be interrupted
    in-process); None when it exceeds the timeout."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_path_child, args=(str(store_dir), kind, pairs, max_len, max_paths, q))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        return None
    return q.get(timeout=5)


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

    groups = []
    for i in range(args.path_reps):
        e0 = int(rng.integers(0, n))
        e1 = walk_from(kg, e0, 3, rng)
        e2 = walk_from(kg, e0, 2, rng)
        groups.append([e0, e1] if i % 2 == 0 else [e0, e1, e2])
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
