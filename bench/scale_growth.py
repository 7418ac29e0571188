"""Growth exponent of PoG's graph-stage time against KG size (bench/pog_scale.py).

The exponent is the least-squares slope of log(time) against log(triples) over the measured
sizes, per question group and percentile: 1.0 means time grows like the KG, 0 means it does
not grow. Two sizes give the two-point slope."""

from __future__ import annotations

import math

STAGES = ("subgraph", "clustering", "reduction", "paths", "total")


def pct(xs: list[float], q: float) -> float:
    """The q-quantile of xs by nearest rank (NaN for no values)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def slope(points: list[tuple[float, float]]) -> float:
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(max(y, 1e-6)) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else math.nan


def print_growth(runs: dict[int, dict]) -> None:
    """`runs`: size -> the summary a --measure process wrote (rows, qs, triples)."""
    sizes = sorted(runs)
    tri = ", ".join(f"{runs[n]['triples']:,}" for n in sizes)
    print(f"\n=== growth exponent of time against triples ({tri}) ===")
    for group, keep in (
        ("single", lambda q: len(q["topics"]) == 1),
        ("two-topic", lambda q: len(q["topics"]) > 1),
    ):
        for st in STAGES:
            cells = []
            for q in (0.5, 0.95):
                pts = []
                for n in sizes:
                    r = runs[n]
                    xs = [
                        row["times"][st]
                        for qq, row in zip(r["qs"], r["rows"], strict=True)
                        if keep(qq)
                    ]
                    if xs:
                        pts.append((r["triples"], pct(xs, q)))
                cells.append(f"{slope(pts):6.2f}" if len(pts) >= 2 else "   n/a")
            if cells[0].strip() != "n/a":
                print(f"   {group:<9} {st:<11} p50 {cells[0]}   p95 {cells[1]}")
