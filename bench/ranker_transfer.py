"""Rankers on KGs kgreason was never tuned on (issue 37): PathQuestion's four KGs and the
hand-written company KG (tests/data/ownkg), every ranking on the SAME candidate paths.

Per KG, the rankings:
  today's default   whole-path similarity (static), what `ask` uses on a KG with no ranker
  hop-aligned       the zero-shot hop-aligned ranking (`--ranker hop-aligned`)
  order-aligned     the zero-shot order-aware ranking (`--ranker order-aligned`), per
                    encoder (--encoders: static, minilm)
  MetaQA-trained    the bundled ranker (trained on MetaQA dev over the movie KG)
  label-free        `kgreason train ranker --kg STORE` on THAT KG: questions generated from
                    its triples, no labelled question (the real command's code path:
                    a store built by `kg build`, then run_training); with --order-too also
                    trained with the order-aware feature (TrainConfig.order, off by default)
Metrics (ranker_bench.compare): Hits@1 (first answer of the top path is gold), set F1,
gold-in-top-path; scoring latency per question. Label-free training: wall time and the
process's peak RSS so far (the first KG's is training's own). No question scored here was trained on: the
label-free rankers see only generated questions, the bundled one only MetaQA.

    python bench/ranker_transfer.py [--pq 300] [--per-hop 800] [--encoders static,minilm]
        [--order-too]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ranker_bench as rb

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "tests" / "data" / "ownkg"


def build(tsv: Path, out: Path) -> Path:
    exe = Path(sys.executable).with_name("kgreason")
    subprocess.run(
        [str(exe), "kg", "build", str(tsv), "--out", str(out)], check=True, capture_output=True
    )
    return out


async def label_free(
    store: Path, out: Path, per_hop: int, *, order: bool = False
) -> tuple[Path, float, float, dict]:
    import functools

    from kgreason.config import Settings
    from kgreason.eval import ranker_training
    from kgreason.eval.ranker_training import TrainRequest, run_training
    from kgreason.kg.settings import KGSettings
    from kgreason.pog.ranker.train import TrainConfig

    t0 = time.perf_counter()
    req = TrainRequest("generated", "dev", (1, 2, 3), per_hop, None, out)
    # the training's config with or without the order feature (the bench only)
    ranker_training.TrainConfig = functools.partial(TrainConfig, order=order)  # type: ignore[misc]
    try:
        rep = await run_training(Settings(kg=KGSettings(store=store)), req, lambda *a: None)
    finally:
        ranker_training.TrainConfig = TrainConfig  # type: ignore[misc]
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out, wall, peak, rep


async def own_questions(kg) -> list:
    from kgreason.pog.ranker.supervision import TrainQuestion

    out = []
    for i, ln in enumerate((OWN / "questions.tsv").read_text().splitlines()):
        if ln.startswith("#") or not ln.strip():
            continue
        q, gold, hops = ln.split("\t")
        mention = q[q.index("[") + 1 : q.index("]")]
        hit = (await kg.search(mention, limit=1, fuzzy=False))[0].id
        out.append(TrainQuestion(f"own-{i}", q, (mention,), (hit,), (gold,), int(hops)))
    return out


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pq", type=int, default=300, help="PathQuestion questions per file")
    ap.add_argument("--per-hop", type=int, default=800, help="generated questions per hop")
    ap.add_argument("--encoders", default="static", help="order-aligned with these encoders")
    ap.add_argument(
        "--order-too", action="store_true", help="label-free also with the order feature"
    )
    args = ap.parse_args(argv)

    from kgreason.embed import build_embedder
    from kgreason.embed.settings import EmbedSettings
    from kgreason.kg.open import open_kg
    from kgreason.kg.settings import KGSettings
    from kgreason.pog.fuzzy import FuzzySelector
    from kgreason.pog.ranker.artefact import load_ranker
    from kgreason.pog.ranker.factory import bundled_ranker_path
    from kgreason.pog.ranker.zeroshot import HopAlignedRanker, OrderAlignedRanker

    static = build_embedder(EmbedSettings(backend="static"))
    common = {
        "today's default (whole path)": rb.today(FuzzySelector(static)),
        "hop-aligned": rb.scorer(HopAlignedRanker(static)),
    }
    for enc in args.encoders.split(","):
        emb = static if enc == "static" else build_embedder(EmbedSettings(backend=enc))
        common[f"order-aligned ({enc})"] = rb.scorer(OrderAlignedRanker(emb))
    common["MetaQA-trained (bundled)"] = rb.scorer(load_ranker(bundled_ranker_path(), static))
    kgs = [("company (ownkg)", OWN / "company.tsv", None)]
    if rb.PQ.is_dir():
        kgs += [(q, rb.PQ / "PathQuestion" / f"{kb}.txt", q) for q, kb in rb.PQ_FILES.items()]
    else:
        print(f"(no PathQuestion at {rb.PQ}: the company KG only)")
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, tsv, qfile in kgs:
            store = build(tsv, Path(tmp) / f"{tsv.stem}-store")
            art, wall, grew, rep = await label_free(
                store, Path(tmp) / f"{tsv.stem}-lf", args.per_hop
            )
            kg = open_kg(KGSettings(store=store))
            qs = (
                await own_questions(kg)
                if qfile is None
                else await rb.pq_questions(kg, qfile, args.pq)
            )
            rankings = {**common, "label-free (this KG)": rb.scorer(load_ranker(art, static))}
            if args.order_too:
                new, *_ = await label_free(
                    store, Path(tmp) / f"{tsv.stem}-lf-order", args.per_hop, order=True
                )
                rankings["label-free + order_align"] = rb.scorer(load_ranker(new, static))
            res = await rb.compare(kg, qs, rankings)
            tr = rep["training"]
            rb.print_table(
                f"{name}: {len(qs)} questions; label-free training on {tr['questions']} generated"
                f" questions: {wall:.1f} s (process peak RSS so far {grew:.0f} MiB)",
                res,
            )
            for k, per in res.items():
                hits = [m for key, m in per.items() if key != "latency_ms"]
                n = sum(m["n"] for m in hits)
                h1 = sum(m["hits1"] * m["n"] for m in hits) / max(n, 1)
                summary.append((name, k, n, h1))
    print("\n== summary: Hits@1 over all hops ==")
    kg_names = list(dict.fromkeys(s[0] for s in summary))
    print(f"{'ranking':<32}" + "".join(f"{k:>18}" for k in kg_names))
    for r in dict.fromkeys(s[1] for s in summary):
        row = {s[0]: s[3] for s in summary if s[1] == r}
        print(f"{r:<32}" + "".join(f"{row.get(k, float('nan')):>18.1f}" for k in kg_names))


if __name__ == "__main__":
    asyncio.run(main())
