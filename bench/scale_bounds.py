"""`bench/pog_scale.py --bounds-only [--baseline-src DIR]`: the subgraph step alone, the
edge-order and relation-aware bounds interleaved (and, with a baseline, another checkout's
step against this one, checking the results are identical)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from kgreason.kg.store import StoreKG
from kgreason.pog.settings import PoGSettings
from scale_growth import pct


def bounds_only(d: Path, args: argparse.Namespace) -> None:
    """Only the subgraph step, three bounds interleaved in one process (best of 3 each):
    time, and whether the gold answers are in the subgraph (for single-topic questions the
    reduced subgraph is the subgraph). Cheap enough for every question of a size.
    "relation-aware" is the setting (groups = relation paths from the topic);
    "per-hop relation" groups by a hop's (relation, direction) only (by_path=False)."""
    qs = json.loads((d / "questions.json").read_text())[:: args.every][: args.limit]
    kg = StoreKG(d / "store")
    cap, depth = PoGSettings().max_subgraph_triples, PoGSettings().d_max
    g = kg.graph
    bounds = {
        "edge-order": g.expand,
        "per-hop relation": lambda s, d, m: g.expand_grouped(s, d, m, by_path=False),
        "relation-aware": g.expand_grouped,
    }
    ms: dict[str, list[float]] = {b: [] for b in bounds}
    cut_ms: dict[str, list[float]] = {b: [] for b in bounds}
    hits = {b: [0, 0] for b in bounds}  # [any gold, every gold]
    cuts = 0
    for q in qs:
        seeds = kg.node_ids(q["topics"])
        seeds = seeds[seeds >= 0]
        gold = kg.node_ids(q["answers"])
        best, ents = {}, {}
        cut = False
        for _ in range(3):
            for b, fn in bounds.items():
                t0 = time.perf_counter()
                res = fn(seeds, depth, cap)
                best[b] = min(best.get(b, 1e9), time.perf_counter() - t0)
                h, _, t = g.triples(res.eids)
                ents[b] = np.union1d(h, t)
                cut = cut or res.truncated
        cuts += cut
        for b in bounds:
            ms[b].append(best[b] * 1000)
            if cut:
                cut_ms[b].append(best[b] * 1000)
            inside = np.isin(gold, ents[b])
            hits[b][0] += bool(inside.any())
            hits[b][1] += bool(inside.all())
    c = kg.manifest.counts
    print(f"=== bounds, subgraph step only: {c['triples']:,} triples, {len(qs)} questions ===")
    print(f"   cut by the bound: {cuts}/{len(qs)}")
    for b in bounds:
        print(
            f"   {b:<17} p50 {pct(ms[b], 0.5):7.1f} ms p95 {pct(ms[b], 0.95):7.1f} ms;"
            f" cut questions p50 {pct(cut_ms[b], 0.5):7.1f} ms;"
            f" some gold in subgraph {hits[b][0]}/{len(qs)}, every gold {hits[b][1]}/{len(qs)}"
        )


def bounds_old_new(d: Path, args: argparse.Namespace) -> None:
    """--bounds-only with --baseline-src: the whole subgraph step (detect_subgraph_store)
    of that checkout's graph.py + subgraph.py against this one's, interleaved in one process
    on the same store (best of 3 each), both bounds; checks the results are identical."""
    import copy
    import importlib.util

    def load(name: str, path: Path):  # another checkout's module under a private name
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    src = Path(args.baseline_src) / "kgreason"
    old_graph = load("_old_store_graph", src / "kg/store/graph.py")
    old_sub = load("_old_pog_subgraph", src / "pog/subgraph.py")
    from kgreason.pog.subgraph import detect_subgraph_store

    qs = json.loads((d / "questions.json").read_text())[:: args.every][: args.limit]
    kg = StoreKG(d / "store")
    old_kg = copy.copy(kg)
    old_kg.graph = old_graph.CSRGraph(kg.path, kg.graph.noise)
    print(f"=== subgraph step, old ({args.baseline_src}) / new: {d.name}, {len(qs)} questions ===")
    for bound in ("edge-order", "relation-aware"):
        s = PoGSettings(subgraph_bound=bound)
        ms: dict[tuple[int, str], list[float]] = {}
        for q in qs:
            best = {"old": 1e9, "new": 1e9}
            for _ in range(3):
                t0 = time.perf_counter()
                a, ea = old_sub.detect_subgraph_store(old_kg, q["topics"], s)
                t1 = time.perf_counter()
                b, eb = detect_subgraph_store(kg, q["topics"], s)
                t2 = time.perf_counter()
                best = {"old": min(best["old"], t1 - t0), "new": min(best["new"], t2 - t1)}
            same = np.array_equal(ea, eb) and ea.dtype == eb.dtype
            same = same and (a.truncated, a.truncation_reason, a.cut_detail) == (
                b.truncated,
                b.truncation_reason,
                b.cut_detail,
            )
            if not same:
                raise SystemExit(f"DIFFERENT result for {q['topics']} ({bound})")
            for k, v in best.items():
                ms.setdefault((min(len(q["topics"]), 2), k), []).append(v * 1000)
        for n_top in (1, 2):
            o, w = ms.get((n_top, "old"), []), ms.get((n_top, "new"), [])
            if o:
                print(
                    f"   {bound:<14} {n_top} topic(s) n={len(o):3}: p50 {pct(o, 0.5):7.1f} ->"
                    f" {pct(w, 0.5):6.1f} ms ({pct(o, 0.5) / pct(w, 0.5):4.1f}x), p95"
                    f" {pct(o, 0.95):7.1f} -> {pct(w, 0.95):6.1f} ms"
                    f" ({pct(o, 0.95) / pct(w, 0.95):4.1f}x); results identical"
                )
