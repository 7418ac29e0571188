"""PoG's graph stages through a SPARQL server against the local store, same questions, same run.

    python bench/pog_scale_sparql.py --sizes 1000000,10000000 [--engines oxigraph,virtuoso]
                                     [--every 15] [--limit 8] [--work /tmp/kgreason-scale]

Issue 15 asks for the graph stages to be >= 10x faster than "the SPARQL path in the same
run". The SPARQL path is what kgreason runs on a remote KG: `prepare_graph` on a `SparqlKG`
(subgraph detection through batched, paged VALUES queries, then the generic clustering,
reduction) and the same order-free path search; the local path is `prepare_graph` on the
`StoreKG` of the same triples (integer arrays). Each question runs on both, one after the
other, in this process; the all-stage times and the per-stage medians are printed with
their ratio.

Engines: an Oxigraph HTTP server (`oxigraph serve-read-only` of the store bench/pog_scale.py
built with `--sparql-max`), and Virtuoso 7 (apt virtuoso-opensource) loaded from the same
triples, where installed. Stores come from bench/pog_scale.py's --work directory (run it first
with `--sparql-max` covering the size). The SPARQL side uses IRIs `http://kg.example/<key>`
(the `generic` dialect), so the same entity has the same key on both sides after the prefix.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

sys.path.insert(0, str(ROOT / "bench"))

from tests.servers import (  # noqa: E402
    RunningServer,
    _popen,
    _wait_ready,
    find_binary,
    free_port,
    start_virtuoso,
)

from kgreason.kg.sparql import SparqlKG  # noqa: E402
from kgreason.kg.store import StoreKG  # noqa: E402
from kgreason.pog.settings import PoGSettings  # noqa: E402
from pog_scale import run_question  # noqa: E402
from scale_growth import STAGES, pct  # noqa: E402

NS = "http://kg.example/"


def start_oxigraph_on(location: Path, workdir: Path) -> RunningServer:
    binary = find_binary("oxigraph")
    if not binary:
        raise RuntimeError("the `oxigraph` server is not installed (pip oxigraph)")
    port = free_port()
    cmd = [binary, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"]
    t0 = time.monotonic()
    proc = _popen(cmd, workdir / "oxigraph.log", workdir)
    server = RunningServer(
        "Oxigraph", f"http://127.0.0.1:{port}/query", proc, workdir, workdir / "oxigraph.log"
    )
    _wait_ready(server, 120)
    server.timings["start_s"] = time.monotonic() - t0
    return server


def write_nt(tsv: Path, out: Path) -> None:
    with open(tsv) as f, open(out, "w") as w:
        for line in f:
            h, r, t = line.rstrip("\n").split("\t")
            w.write(f"<{NS}{h}> <{NS}{r}> <{NS}{t}> .\n")


async def stages(kg, topics: list[str], settings: PoGSettings) -> tuple[dict[str, float], int, int]:
    staged = await run_question(kg, {"topics": topics}, settings)
    return staged.times, staged.prep.stats.triples, len(staged.search.paths)


async def compare(store: StoreKG, remote: SparqlKG, qs: list[dict], verbose: bool) -> None:
    settings = PoGSettings()
    loc: dict[str, list[float]] = {s: [] for s in STAGES}
    rem: dict[str, list[float]] = {s: [] for s in STAGES}
    same_size = 0
    await stages(store, qs[0]["topics"], settings)  # warm the memory maps
    for i, q in enumerate(qs):
        lt, ln, lp = await stages(store, q["topics"], settings)
        rt, rn, rp = await stages(remote, [NS + t for t in q["topics"]], settings)
        same_size += ln == rn
        for s in STAGES:
            loc[s].append(lt[s] * 1000)
            rem[s].append(rt[s] * 1000)
        if verbose:
            print(
                f"  q{i} topics={len(q['topics'])} store {lt['total'] * 1000:.0f} ms"
                f" ({ln:,} triples, {lp:,} paths) | sparql {rt['total'] * 1000:.0f} ms"
                f" ({rn:,} triples, {rp:,} paths)",
                file=sys.stderr,
            )
    for s in STAGES:
        a, b = pct(loc[s], 0.5), pct(rem[s], 0.5)
        print(
            f"   {s:<11} store p50 {a:9.1f} p95 {pct(loc[s], 0.95):9.1f} ms | sparql p50 {b:9.1f}"
            f" p95 {pct(rem[s], 0.95):9.1f} ms | ratio p50 {b / a if a else float('inf'):7.1f}x"
        )
    per_q = [r / max(l_, 1e-9) for l_, r in zip(loc["total"], rem["total"], strict=True)]
    print(
        f"   all stages, per question sparql/store: min {min(per_q):.1f}x median"
        f" {statistics.median(per_q):.1f}x; p95/p95 {pct(rem['total'], 0.95) / pct(loc['total'], 0.95):.1f}x;"
        f" same subgraph size {same_size}/{len(qs)}"
    )


async def run_remote(url: str, engine: str, store: StoreKG, qs: list[dict], verbose: bool) -> None:
    remote = SparqlKG(
        url,
        dialect="generic",
        noise_prefixes=(),
        timeout_s=600,
        default_graph=NS if engine == "virtuoso" else None,
    )
    try:
        await compare(store, remote, qs, verbose)
    finally:
        await remote.aclose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-scale"))
    ap.add_argument("--engines", default="oxigraph,virtuoso")
    ap.add_argument("--every", type=int, default=15)
    ap.add_argument("--limit", type=int, default=8)
    ap.add_argument("--max-topics", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    for n in (int(x) for x in args.sizes.split(",")):
        d = args.work / f"n{n}-s{args.seed}"
        qs = json.loads((d / "questions.json").read_text())[:: args.every]
        if args.max_topics:
            qs = [q for q in qs if len(q["topics"]) <= args.max_topics]
        qs = qs[: args.limit]
        store = StoreKG(d / "store")
        c = store.manifest.counts
        for engine in args.engines.split(","):
            with tempfile.TemporaryDirectory(dir=args.work) as tmp:
                server = None
                try:
                    if engine == "oxigraph":
                        if not (d / "oxigraph").exists():
                            print(f"{d.name}: no oxigraph store (bench/pog_scale.py --sparql-max)")
                            continue
                        server = start_oxigraph_on(d / "oxigraph", Path(tmp))
                    elif engine == "virtuoso":
                        if not find_binary("virtuoso-t"):
                            print("virtuoso-t not installed: skipped")
                            continue
                        nt = Path(tmp) / "kg.nt"
                        write_nt(d / "kg.tsv", nt)
                        server = start_virtuoso(Path(tmp) / "v", [nt], graph=NS, timeout_s=3600)
                        nt.unlink()
                    else:
                        raise SystemExit(f"unknown engine {engine!r}")
                    t = server.timings
                    print(
                        f"\n=== {c['triples']:,} triples ({d.name}), {engine}: {len(qs)} questions;"
                        f" server start {t.get('start_s', 0):.1f} s, load {t.get('load_s', 0):.0f} s ==="
                    )
                    asyncio.run(run_remote(server.url, engine, store, qs, args.verbose))
                finally:
                    if server is not None:
                        server.stop()


if __name__ == "__main__":
    main()
