"""Leave one KG out (issue 37): a ranker trained on the labelled questions of the OTHER KGs,
scored on a KG whose questions and relations it never saw, beside today's rankings on the
same candidate paths.

KG groups (a group is left out whole: PQ-2H and PQ-3H share PathQuestion's relations, so
training on one and scoring the other would not be a new KG):
  metaqa   the bundled movie KG; trains on MetaQA dev's first --train per hop, scores dev
           questions 4000.. (the bundled ranker trained on the first 4000 per hop: the
           "test-like" slice it never saw)
  pq       PathQuestion PQ-2H / PQ-3H over their KBs; scores each file's first --test
           questions, trains on the next --train
  pql      PQL-2H / PQL-3H, the same way
  company  tests/data/ownkg (12 questions): scored only, never trained on (too few)

Per left-out group: the LOKO ranker (trained on every other group, with the alignment and
order-alignment features), the bundled MetaQA-trained ranker, zero-shot hop-aligned and
order-aligned, and today's default (whole-path similarity),
all on the same paths (ranker_bench.compare): Hits@1 and set F1 per file and hop. Labelled
sets are cached in --work, so the folds share their labelling.

--revisit on searches every candidate set (training and scoring alike) with
`pog.revisit_when_empty = "on"`: paths may return to the topic when a step would otherwise
be empty, and self-loops are kept (what the default does for a zero-shot ranking; "off",
the default here, is the paper's search).

    python bench/ranker_loko.py [--train 600] [--test 300] [--work /tmp/kgreason-loko]
        [--revisit off|on]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ranker_bench as rb
from ranker_transfer import OWN, build, own_questions

GROUPS = {
    "metaqa": ["MetaQA-1H", "MetaQA-2H", "MetaQA-3H"],
    "pq": ["PQ-2H", "PQ-3H"],
    "pql": ["PQL-2H", "PQL-3H"],
    "company": ["company"],
}
#: MetaQA dev questions per hop the bundled ranker trained on: the scored slice starts here
METAQA_TRAINED = 4000


async def questions(kg, name: str, lo: int, hi: int) -> list:
    """Questions lo..hi of one file (its topics resolved on `kg`)."""
    if name == "company":
        return (await own_questions(kg))[lo:hi]
    if name.startswith("MetaQA"):
        from kgreason.eval.ranker_data import load_questions

        hop = int(name[-2])
        # questions whose topic does not resolve are dropped: read past `hi` records so that
        # the slice is full (index lo.. of the resolved questions is record lo.. or later)
        qs, _ = await load_questions(kg, "metaqa", split="dev", hops=(hop,), limit=hi + 1000)
        return qs[lo:hi]
    return (await rb.pq_questions(kg, name, hi))[lo:hi]


def open_file_kg(name: str, work: Path):
    from kgreason.kg.open import open_kg
    from kgreason.kg.settings import KGSettings

    if name.startswith("MetaQA"):
        return open_kg(KGSettings())  # the bundled KG
    if name == "company":
        tsv = OWN / "company.tsv"
    else:
        tsv = rb.PQ / "PathQuestion" / f"{rb.PQ_FILES[name]}.txt"
    store = work / f"{tsv.stem}-store"
    if not store.exists():
        build(tsv, store)
    return open_kg(KGSettings(store=store))


def search_settings(revisit: str):
    from kgreason.pog.settings import PoGSettings

    return PoGSettings(revisit_when_empty=revisit)


async def labelled(name: str, n: int, test: int, work: Path, revisit: str = "off"):
    """The labelled training slice of one file (cached)."""
    from kgreason.pog.ranker.supervision import SupervisedSet, supervise

    cache = work / f"sup-{name}-{n}-{test}{'' if revisit == 'off' else '-revisit'}.npz"
    if cache.exists():
        return SupervisedSet.load(cache)
    kg = open_file_kg(name, work)
    lo = 0 if name.startswith("MetaQA") else test
    qs = await questions(kg, name, lo, lo + n)
    t0 = time.perf_counter()
    sup = await supervise(kg, qs, search_settings(revisit))
    print(f"  labelled {name}: {len(qs)} questions in {time.perf_counter() - t0:.0f} s", flush=True)
    sup.save(cache)
    return sup


def train_on(sets: list, out: Path, embedder):
    from kgreason.eval.ranker_data import template_split
    from kgreason.eval.ranker_training import EMBEDDER
    from kgreason.pog.ranker.artefact import load_ranker, save_ranker
    from kgreason.pog.ranker.supervision import concat_sets
    from kgreason.pog.ranker.train import TrainConfig, train

    sup = concat_sets(sets)
    tr, va = template_split(sup.questions, valid_fraction=0.2, seed=0)
    cfg = TrainConfig(epochs=4, seed=0, order=True)  # every scalar that carries across KGs
    t0 = time.perf_counter()
    res = train(sup, embedder, cfg, tr, va)
    meta = {
        "embedder": EMBEDDER,
        "kg": {"name": "leave-one-KG-out", "fingerprint": "", "relations": sup.vocab},
        "training": {"dataset": "loko", "label_free": False, "questions": len(sup)},
        "validation": res.valid,
        "chosen_by": "validation Hits@1 (all hops)",
    }
    path = save_ranker(out, res.scorer, res.proj, meta, res.scalars)
    return load_ranker(path, embedder), time.perf_counter() - t0, len(sup)


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--train", type=int, default=600, help="training questions per file")
    ap.add_argument("--test", type=int, default=300, help="scored questions per file")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-loko"))
    ap.add_argument("--groups", default=",".join(GROUPS), help="groups to leave out, in turn")
    ap.add_argument("--revisit", choices=["off", "on"], default="off")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if not rb.PQ.is_dir():
        sys.exit(f"no PathQuestion at {rb.PQ} (set KGREASON_SHARED_DATA)")

    from kgreason.embed import build_embedder
    from kgreason.embed.settings import EmbedSettings
    from kgreason.pog.fuzzy import FuzzySelector
    from kgreason.pog.ranker.artefact import load_ranker
    from kgreason.pog.ranker.factory import bundled_ranker_path
    from kgreason.pog.ranker.zeroshot import HopAlignedRanker, OrderAlignedRanker

    static = build_embedder(EmbedSettings(backend="static"))
    common = {
        "today's default (whole path)": rb.today(FuzzySelector(static)),
        "hop-aligned": rb.scorer(HopAlignedRanker(static)),
        "order-aligned": rb.scorer(OrderAlignedRanker(static)),
        "MetaQA-trained (bundled)": rb.scorer(load_ranker(bundled_ranker_path(), static)),
    }
    summary: list[tuple[str, str, str, int, float, float]] = []
    for out_group in args.groups.split(","):
        train_files = [f for g, fs in GROUPS.items() if g not in (out_group, "company") for f in fs]
        sets = [
            await labelled(f, args.train, args.test, args.work, args.revisit) for f in train_files
        ]
        suffix = "" if args.revisit == "off" else "-revisit"
        ranker, secs, n = train_on(sets, args.work / f"loko-without-{out_group}{suffix}", static)
        print(f"\n# left out: {out_group}; trained on {n} questions of {', '.join(train_files)} "
              f"in {secs:.0f} s")  # fmt: skip
        rankings = {**common, f"LOKO (without {out_group})": rb.scorer(ranker)}
        for f in GROUPS[out_group]:
            kg = open_file_kg(f, args.work)
            lo = METAQA_TRAINED if f.startswith("MetaQA") else 0
            qs = await questions(kg, f, lo, lo + args.test)
            res = await rb.compare(kg, qs, rankings, search_settings(args.revisit))
            rb.print_table(f"{f}: {len(qs)} questions", res)
            for name, per in res.items():
                cells = [m for key, m in per.items() if key != "latency_ms"]
                k = sum(m["n"] for m in cells)
                h1 = sum(m["hits1"] * m["n"] for m in cells) / max(k, 1)
                f1 = sum(m["f1"] * m["n"] for m in cells) / max(k, 1)
                summary.append(
                    (out_group, f, "LOKO" if name.startswith("LOKO") else name, k, h1, f1)
                )
    print("\n== leave one KG out: Hits@1 / set F1 per file (LOKO: trained without that KG) ==")
    names = list(dict.fromkeys(s[2] for s in summary))
    print(f"{'file':<12}{'n':>5}" + "".join(f"{n[:26]:>28}" for n in names))
    for f in dict.fromkeys(s[1] for s in summary):
        row = {s[2]: s for s in summary if s[1] == f}
        n = next(iter(row.values()))[3]
        print(f"{f:<12}{n:>5}" + "".join(
            f"{row[k][4]:>20.1f} / {row[k][5]:5.1f}" if k in row else f"{'-':>28}" for k in names))  # fmt: skip
    print("(the bundled ranker trained on MetaQA: its MetaQA rows are in-KG, on dev questions "
          f"{METAQA_TRAINED}.. it did not see)")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
