"""MetaQA dev mode of bench/pog_scale.py (`--metaqa OUT.json [--compare OLD.json]`): the
bundled MetaQA store, gold topic, first --limit questions per hop; per-stage times and a digest
of every path, so two code versions can be shown to return identical LLM-free results."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
from pathlib import Path

from kgreason.pog.graph import prepare_graph
from kgreason.pog.settings import PoGSettings
from scale_growth import STAGES, pct


def metaqa(args: argparse.Namespace) -> None:
    """MetaQA dev (bundled store, gold topic, first --limit per hop): per-stage times and a
    digest of every path (signature and the materialised triples of the first 20), written
    to --metaqa as JSON; with --compare OLD.json, says whether the paths are identical."""
    import hashlib
    import os

    from kgreason.kg.open import open_kg
    from kgreason.kg.settings import KGSettings
    from kgreason.pog.paths import path_signature, supplement_paths

    shared = os.environ.get("KGREASON_SHARED_DATA", "/work/shared/data")
    meta = Path(shared) / "kgqa" / "metaqa"
    kg = open_kg(KGSettings())
    settings = PoGSettings(subgraph_bound=args.bound) if args.bound else PoGSettings()
    out: dict[str, dict] = {}
    for hop in (1, 2, 3):
        with (meta / f"{hop}-hop" / "dev.txt").open() as f:
            lines = [ln for _, ln in zip(range(args.limit), f, strict=False)]
        for i, line in enumerate(lines):
            topic = re.findall(r"\[([^\]]+)\]", line.split("\t")[0])[0]
            hits = asyncio.run(kg.search(topic, limit=1, fuzzy=False))
            if not hits:
                continue
            t0 = time.perf_counter()
            prep = asyncio.run(prepare_graph(kg, [hits[0].id], settings))
            t1 = time.perf_counter()
            s = supplement_paths(
                prep.graph,
                [hits[0].id],
                n_topics=1,
                d_max=settings.d_max,
                max_paths=settings.max_paths,
            )
            t2 = time.perf_counter()
            top = s.materialize(s.paths[:20])
            dig = hashlib.sha256(
                repr(([path_signature(p) for p in s.paths], [p.hops for p in top])).encode()
            ).hexdigest()
            times = {k: v * 1000 for k, v in prep.timings_s.items()}
            times["paths"], times["total"] = (t2 - t1) * 1000, (t2 - t0) * 1000
            out[f"{hop}-{i}"] = {
                "times": times,
                "digest": dig,
                "n": len(s.paths),
                "bound": s.bound_reason,
                "stats": repr(prep.stats),
            }
    Path(args.metaqa).write_text(json.dumps(out))
    for st in STAGES:
        xs = [r["times"][st] for r in out.values()]
        print(
            f"MetaQA {len(xs)} questions  {st:<11} p50 {pct(xs, 0.5):7.1f} ms  p95 {pct(xs, 0.95):7.1f} ms"
        )
    if args.compare:
        old = json.loads(Path(args.compare).read_text())
        same = [k for k in out if k in old and old[k]["digest"] == out[k]["digest"]]
        stats = [k for k in out if k in old and old[k]["stats"] == out[k]["stats"]]
        print(f"identical paths vs {args.compare}: {len(same)}/{len(out)}; same stats {len(stats)}")
        for st in STAGES:
            a = [old[k]["times"][st] for k in out if k in old]
            b = [out[k]["times"][st] for k in out if k in old]
            print(
                f"   {st:<11} median old {statistics.median(a):7.1f} ms  new {statistics.median(b):7.1f} ms"
            )
