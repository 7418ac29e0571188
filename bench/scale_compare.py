"""Old / new code on the same scale questions, one after the other (bench/pog_scale.py
--baseline-src or --baseline-bound): per-stage p50 / p95 and their ratios, gold containment
and bounds per question group, path counts and peak RSS."""

from __future__ import annotations

from scale_growth import STAGES, pct


def compare_runs(old: dict, new: dict) -> None:
    """old/new per stage (p50, p95) per group, and the gold-in-reduced-subgraph counts."""
    print("=== old / new, same questions, measured one after the other in this run ===")
    for name, pick in (("single", 1), ("two-topic", 2)):
        idx = [i for i, q in enumerate(new["qs"]) if (len(q["topics"]) == 1) == (pick == 1)]
        if not idx:
            continue
        for st in STAGES:
            a = [old["rows"][i]["times"][st] * 1000 for i in idx]
            b = [new["rows"][i]["times"][st] * 1000 for i in idx]
            print(
                f"   {name:<9} {st:<11} p50 {pct(a, 0.5):9.1f} -> {pct(b, 0.5):8.1f} ms"
                f" ({pct(a, 0.5) / max(pct(b, 0.5), 1e-9):6.1f}x)   p95 {pct(a, 0.95):9.1f} ->"
                f" {pct(b, 0.95):8.1f} ms ({pct(a, 0.95) / max(pct(b, 0.95), 1e-9):6.1f}x)"
            )
        for key in ("gold_reduced", "gold_path", "gold_reduced_all", "gold_path_all"):
            a = sum(bool(old["rows"][i].get(key)) for i in idx)
            b = sum(bool(new["rows"][i].get(key)) for i in idx)
            print(f"   {name:<9} {key:<16} old {a}/{len(idx)}  new {b}/{len(idx)}")
        for key in ("cut", "path_bound"):
            a = sum(bool(old["rows"][i][key]) for i in idx)
            b = sum(bool(new["rows"][i][key]) for i in idx)
            print(f"   {name:<9} {key:<16} old {a}/{len(idx)}  new {b}/{len(idx)}")
    same = sum(o["n_paths"] == w["n_paths"] for o, w in zip(old["rows"], new["rows"], strict=True))
    print(f"   same number of paths: {same}/{len(new['rows'])}")
    print(f"   peak RSS old {old['rss_mb']:,.0f} MB, new {new['rss_mb']:,.0f} MB")
