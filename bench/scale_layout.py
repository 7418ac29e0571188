"""The same code on two stores of the same triples: one built with first-appearance node ids
(kgreason before the key-ordered layout), one with ids in key order (kg/store/build._key_order).
Question by question, interleaved, best of --repeat: are the results identical, and what do
the stages take?

    python bench/scale_layout.py --old /tmp/kgreason-scale/n10000000-s0 \\
        --new /tmp/kgreason-scale-ko/n10000000-s0 [--every 1] [--repeat 3]

Why a bench of its own (issue 15): a layout change moves no code, so bench/pog_scale_ab.py
(two code versions, one store) cannot show it. Both store directories come from
bench/pog_scale.py (`--work`); the questions are generated from the triples, not the ids, so
both directories hold the same questions.json (checked). The digest covers the subgraph
stats, bounds and cut reports, every path's hops by name, and every local id's name.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kgreason.aio import run_sync
from kgreason.heap import warm_all
from kgreason.kg.store import StoreKG
from kgreason.pog.settings import PoGSettings
from pog_scale import run_question

STAGES = ("subgraph", "clustering", "reduction", "paths", "total")


def digest(staged: Any) -> str:
    prep, search = staged.prep, staged.search
    g = prep.graph
    h = hashlib.sha256()
    head = (vars(prep.stats), prep.bounds_hit, search.bound_hit, search.bound_reason)
    h.update(repr((head, len(search.paths))).encode())
    for p in search.paths:
        h.update(repr([(x.relation, x.forward, sorted(x.dst)) for x in p.hops]).encode())
    h.update(repr(list(g.names[np.arange(g.n)])).encode())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", type=Path, required=True, help="scale dir, first-appearance ids")
    ap.add_argument("--new", type=Path, required=True, help="scale dir, key-ordered ids")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    qs = json.loads((args.old / "questions.json").read_text())
    if qs != json.loads((args.new / "questions.json").read_text()):
        sys.exit("the two directories hold different questions: not the same triples?")
    stores = {"old": StoreKG(args.old / "store"), "new": StoreKG(args.new / "store")}
    for who, kg in stores.items():
        print(f"{who}: {kg.path}, key-ordered {kg.index.key_ordered}")
    print(f"compiled kernels in use: {warm_all()}")
    settings = PoGSettings()
    for kg in stores.values():  # the memory maps' first pages
        run_sync(run_question(kg, qs[0], settings))
    gc.collect()
    gc.freeze()
    best: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    same, kinds = 0, []
    for i, q in enumerate(qs[:: args.every]):
        got: dict[str, dict[str, float]] = {}
        dig: dict[str, str] = {}
        for rep in range(args.repeat):
            for who in ("old", "new") if (i + rep) % 2 == 0 else ("new", "old"):
                st = run_sync(run_question(stores[who], q, settings))
                dig.setdefault(who, digest(st))
                b = got.get(who)
                got[who] = {k: min(v, b[k]) if b else v for k, v in st.times.items()}
        same += dig["old"] == dig["new"]
        kinds.append(len(q["topics"]))
        for who in best:
            best[who].append(got[who])
    print(f"{len(kinds)} questions, identical results {same}/{len(kinds)}")
    for nt, name in ((1, "single"), (2, "two-topic")):
        idx = [j for j, k in enumerate(kinds) if k == nt]
        if not idx:
            continue
        print(f"-- {name} ({len(idx)} questions), ms p50 / p95, old -> new layout")
        for s in STAGES:
            o = [best["old"][j][s] * 1e3 for j in idx]
            n = [best["new"][j][s] * 1e3 for j in idx]
            print(
                f"   {s:10s} {np.percentile(o, 50):6.1f} / {np.percentile(o, 95):6.1f} -> "
                f"{np.percentile(n, 50):6.1f} / {np.percentile(n, 95):6.1f}"
            )


if __name__ == "__main__":
    main()
