"""SPARQL backends on the Nijmegen fixture: server start/load times and operation latency.

Starts a private Virtuoso (apt virtuoso-opensource) and an Oxigraph server exactly as the
integration tests do, then times the KnowledgeGraph operations through SparqlKG.
Prints figures only. Run: python bench/sparql_bench.py [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.servers import (  # noqa: E402
    FREEBASE_NT,
    WIKIDATA_NT,
    RunningServer,
    start_oxigraph,
    start_virtuoso,
)

from kgreason.kg.sparql import SparqlKG  # noqa: E402


async def _time_ops(kg: SparqlKG, seeds: list[str], repeat: int) -> dict[str, list[float]]:
    ops = {
        "names(2)": lambda: kg.names(seeds),
        "neighbors(2)": lambda: kg.neighbors(seeds),
        "neighbors_named(2)": lambda: kg.neighbors_named(seeds),
        "expand(depth=2)": lambda: kg.expand(seeds, 2, max_triples=10_000),
        "expand(depth=3)": lambda: kg.expand(seeds, 3, max_triples=10_000),
        "search(fuzzy)": lambda: kg.search("Dusseldorf airprt", limit=5),
    }
    out: dict[str, list[float]] = {}
    for name, op in ops.items():
        await op()  # warm-up
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            await op()
            times.append((time.perf_counter() - t0) * 1000)
        out[name] = times
    return out


def _report(label: str, server: RunningServer, figures: dict[str, list[float]]) -> None:
    t = server.timings
    print(f"\n{label}: start {t.get('start_s', 0):.2f} s, load {t.get('load_s', 0):.2f} s")
    for name, times in figures.items():
        p95 = sorted(times)[max(0, int(len(times) * 0.95) - 1)]
        print(f"  {name:22s} median {statistics.median(times):7.2f} ms   p95 {p95:7.2f} ms")


async def _bench(server: RunningServer, dialect: str, seeds: list[str], repeat: int, **kw):
    async with SparqlKG(server.url, dialect=dialect, **kw) as kg:
        return await _time_ops(kg, seeds, repeat)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        virt = start_virtuoso(Path(tmp) / "v", [FREEBASE_NT])
        virt_total = time.monotonic() - t0
        try:
            fig = asyncio.run(_bench(virt, "freebase", ["m.0d2hgq", "m.0f4kq"], args.repeat))
            _report(f"Virtuoso 7 (freebase dialect), ready+loaded in {virt_total:.2f} s", virt, fig)
        finally:
            virt.stop()
        oxi = start_oxigraph(Path(tmp) / "o", [FREEBASE_NT, WIKIDATA_NT])
        try:
            fig = asyncio.run(_bench(oxi, "freebase", ["m.0d2hgq", "m.0f4kq"], args.repeat))
            _report("Oxigraph (freebase dialect)", oxi, fig)
            fig = asyncio.run(_bench(oxi, "wikidata", ["Q47887", "Q142"], args.repeat))
            _report("Oxigraph (wikidata dialect)", oxi, fig)
        finally:
            oxi.stop()


if __name__ == "__main__":
    main()
