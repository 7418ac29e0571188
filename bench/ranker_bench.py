"""The path ranker (issue 14): MetaQA template-split validation, today's rankings on the same
questions, zero-shot on PathQuestion, training time, model size and scoring latency.

Prints:
1. training on MetaQA dev over the bundled KG, split by question template (the topic masked;
   no template on both sides): per model (linear, mlp) Hits@1 / set F1 / gold-in-top-path
   per hop on the whole validation part, training time, parameters and artefact size;
2. on the first N validation questions per hop, every ranking on the SAME candidate paths:
   today's LLM-free ranking (whole-path similarity, static and MiniLM, length penalty 0.02),
   the zero-shot hop-aligned and order-aligned rankings, and the trained ranker (loaded
   from its artefact);
3. scoring latency per question (median / p95, ms) of each ranking on those questions;
4. PathQuestion (PQ/PQL 2H/3H, different KGs and relations): the MetaQA-trained ranker, the
   hop-aligned ranking and today's, per file.
Metrics, identical for every ranking: Hits@1 = the first answer (by name) of the top path's
answer set is gold; set F1 of that answer set; gold-in-top = any gold member in it.
Run from the repo root (a loaded 2-core machine: times are indicative):
    python bench/ranker_bench.py --supervision /tmp/sup.npz [--limit 4000] [--compare 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kgreason.eval.metrics import normalize_answer
from kgreason.kg.base import KnowledgeGraph
from kgreason.pog.fuzzy import FuzzySelector
from kgreason.pog.llm_free import rerank_by_length
from kgreason.pog.ranker.supervision import (
    PathEnumerator,
    SupervisedSet,
    TrainQuestion,
    answer_set,
    concat_sets,
    first_answer,
    set_f1,
)
from kgreason.pog.render import NameBook, displayed_ids
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import ReasoningPath

#: the project's shared data (KGREASON_SHARED_DATA, else ../shared/data beside the repo)
DATA = Path(
    os.environ.get("KGREASON_SHARED_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data"
)
PQ = DATA / "kgqa" / "pathquestion"
PQ_FILES = {"PQ-2H": "2H-kb", "PQ-3H": "3H-kb", "PQL-2H": "PQL2-KB", "PQL-3H": "PQL3-KB"}

#: (question text, topic mentions, paths, topic ids, names) -> one score per path
Ranking = Callable[[str, Sequence[str], Sequence[ReasoningPath], Sequence[str], dict], np.ndarray]


def today(fuzzy: FuzzySelector, penalty: float = 0.02) -> Ranking:
    """The LLM-free mode's ranking before the ranker: whole-path similarity, length penalty."""

    def rank(q, mentions, paths, topics, names):
        ranked = fuzzy.rank(q.replace("[", "").replace("]", ""), paths, names)
        ranked = rerank_by_length(ranked, penalty if len(topics) == 1 else 0.0)
        where = {id(p): i for i, p in enumerate(paths)}
        s = np.zeros(len(paths))
        for r, sp in enumerate(ranked):
            s[where[id(sp.path)]] = -r
        return s

    return rank


def scorer(obj) -> Ranking:
    return lambda q, mentions, paths, topics, names: obj.score(q, mentions, paths, topics)


async def compare(
    kg: KnowledgeGraph,
    questions: Sequence[TrainQuestion],
    rankings: dict[str, Ranking],
    settings: PoGSettings | None = None,
) -> dict[str, dict]:
    """Every ranking on the same candidate paths (searched with `settings`, the defaults
    when None); metrics per hop count, latency."""
    enum = PathEnumerator(kg, settings or PoGSettings())
    book = NameBook(kg)
    rows: dict[str, list[tuple[int, bool, float, bool, float]]] = {k: [] for k in rankings}
    for q in questions:
        paths = await enum.paths(q.topic_ids)
        if not paths:
            for k in rankings:
                rows[k].append((q.hops, False, 0.0, False, 0.0))
            continue
        await book.ensure(displayed_ids(paths, 4))
        await book.ensure(q.topic_ids)
        gold = {normalize_answer(g) for g in q.gold}
        for name, rank in rankings.items():
            t0 = time.perf_counter()
            s = np.asarray(rank(q.text, q.mentions, paths, q.topic_ids, book.names))
            dt = time.perf_counter() - t0
            top = paths[int(np.lexsort((np.arange(len(s)), -s))[0])]
            ans = answer_set(top, q.topic_ids)
            await book.ensure(ans)
            f, hit = set_f1(frozenset(normalize_answer(book.get(e)) for e in ans), gold)
            first = first_answer(ans, book.names)
            ok = first is not None and normalize_answer(book.get(first)) in gold
            rows[name].append((q.hops, ok, f, hit, dt))
    out = {}
    for name, rs in rows.items():
        per = {}
        for h in sorted({r[0] for r in rs}):
            sel = [r for r in rs if r[0] == h]
            per[f"{h}-hop"] = {
                "n": len(sel),
                "hits1": 100 * np.mean([r[1] for r in sel]),
                "f1": 100 * np.mean([r[2] for r in sel]),
                "gold_in_top": 100 * np.mean([r[3] for r in sel]),
            }
        ms = [r[4] * 1000 for r in rs]
        per["latency_ms"] = {"median": statistics.median(ms), "p95": float(np.percentile(ms, 95))}
        out[name] = per
    return out


def print_table(title: str, res: dict[str, dict]) -> None:
    print(f"\n== {title} ==")
    print(f"{'ranking':<28} {'hop':<6} {'n':>5} {'Hits@1':>7} {'set F1':>7} {'gold@top':>8}")
    for name, per in res.items():
        for key, m in per.items():
            if key == "latency_ms":
                continue
            print(
                f"{name:<28} {key:<6} {m['n']:>5} {m['hits1']:7.1f} {m['f1']:7.1f}"
                f" {m['gold_in_top']:8.1f}"
            )
    print("scoring latency per question (ms, median / p95):")
    for name, per in res.items():
        lat = per["latency_ms"]
        print(f"  {name:<26} {lat['median']:8.2f} / {lat['p95']:8.2f}")


async def pq_questions(kg: KnowledgeGraph, qfile: str, limit: int) -> list[TrainQuestion]:
    """The first `limit` questions of a PathQuestion file whose topic `kg` knows."""
    from kgreason.eval.loaders import load_pathquestion
    from kgreason.eval.ranker_data import resolve_topics

    recs = load_pathquestion(PQ / "PathQuestion" / f"{qfile}.txt").records[:limit]
    qs = []
    for r in recs:
        topics = await resolve_topics(kg, r)
        if topics:
            gold = tuple(a for ans in r.answers for a in ans.surface_forms())
            qs.append(TrainQuestion(r.id, r.question, tuple(topics), topics, gold, r.hops or 0))
    return qs


async def pathquestion(rankings: dict[str, Ranking], limit: int) -> None:
    from kgreason.kg.memory import MemoryKG

    for qfile, kbfile in PQ_FILES.items():
        kb = PQ / "PathQuestion" / f"{kbfile}.txt"
        rows = [ln.rstrip("\n").split("\t") for ln in kb.open(encoding="utf-8")]
        kg = MemoryKG([tuple(r) for r in rows if len(r) == 3], name=kbfile)
        qs = await pq_questions(kg, qfile, limit)
        print_table(
            f"PathQuestion {qfile} (first {limit}; {len(qs)} with topic in KG)",
            await compare(kg, qs, rankings),
        )


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--supervision", default="", help="labelled MetaQA sets (.npz), comma-separated"
    )
    ap.add_argument("--limit", type=int, default=2000, help="MetaQA questions per hop to label")
    ap.add_argument("--compare", type=int, default=150, help="validation questions per hop, part 2")
    ap.add_argument("--minilm", type=int, default=40, help="of those, per hop also with MiniLM")
    ap.add_argument("--pq", type=int, default=300, help="PathQuestion questions per file")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--out", default="/tmp/kgreason-ranker-bench")
    ap.add_argument("--ranker", default="", help="use this artefact instead of training")
    args = ap.parse_args(argv)

    from kgreason.config import Settings
    from kgreason.embed import build_embedder
    from kgreason.embed.settings import EmbedSettings
    from kgreason.eval.ranker_data import template_split
    from kgreason.eval.ranker_training import TrainRequest, run_training
    from kgreason.kg.open import open_kg
    from kgreason.kg.settings import KGSettings
    from kgreason.pog.ranker.artefact import load_ranker
    from kgreason.pog.ranker.zeroshot import HopAlignedRanker, OrderAlignedRanker

    kg = open_kg(KGSettings())
    parts = [SupervisedSet.load(Path(p)) for p in args.supervision.split(",") if p]
    cache = Path(args.out + "-supervision.npz")
    if parts:
        concat_sets(parts).save(cache) if len(parts) > 1 else parts[0].save(cache)
    req = TrainRequest(
        "metaqa",
        "dev",
        (1, 2, 3),
        args.limit,
        None,
        Path(args.out),
        epochs=args.epochs,
        supervision=cache,
    )
    if args.ranker:
        path = Path(args.ranker)
    else:
        t0 = time.perf_counter()
        rep = await run_training(Settings(), req, lambda *a: None)
        wall = time.perf_counter() - t0
        tr = rep["training"]
        print("== 1. MetaQA dev, template split, bundled KG ==")
        print(
            f"questions {tr['questions']} (skipped {tr['skipped']}), with >= 1 positive path "
            f"{tr['with_positive_path']} ({100 * tr['with_positive_path'] / tr['questions']:.1f}%);"
            f" train {tr['train_questions']} / valid {tr['valid_questions']}"
        )
        for kind, per in rep["validation"].items():
            for key, m in per.items():
                print(
                    f"  {kind:<7}{' *' if kind == rep['model']['kind'] else '  '} {key:<6} "
                    f"n={m['n']:<5} Hits@1 {m['hits1']:5.1f}  F1 {m['f1']:5.1f}  "
                    f"gold@top {m['gold_in_top']:5.1f}"
                )
        size = sum(f.stat().st_size for f in Path(args.out).iterdir())
        print(
            f"training time (s): {tr['train_s']} (encode+train+validate wall {wall:.1f} s); "
            f"chosen {rep['model']['kind']}, {rep['model']['n_params']} parameters, "
            f"artefact {size / 1024:.0f} KiB"
        )
        path = Path(args.out)

    static = build_embedder(EmbedSettings(backend="static"))
    ranker = load_ranker(path, static)
    zero = HopAlignedRanker(static)
    rankings: dict[str, Ranking] = {
        "today static (whole path)": today(FuzzySelector(static)),
        "zero-shot hop-aligned": scorer(zero),
        "zero-shot order-aligned": scorer(OrderAlignedRanker(static)),
        f"trained ({ranker.spec['model']['kind']})": scorer(ranker),
    }
    sup = SupervisedSet.load(cache)
    _, va = template_split(sup.questions, seed=0)
    val = [sup.questions[i] for i in va]
    sel = [q for h in (1, 2, 3) for q in [x for x in val if x.hops == h][: args.compare]]
    if sel:
        print_table(
            f"2-3. MetaQA validation, first {args.compare} per hop, same paths",
            await compare(kg, sel, rankings),
        )
    if args.minilm:
        mini = build_embedder(EmbedSettings(backend="minilm"))
        few = [q for h in (1, 2, 3) for q in [x for x in val if x.hops == h][: args.minilm]]
        both = {"today MiniLM (whole path)": today(FuzzySelector(mini)), **rankings}
        print_table(
            f"2b. MetaQA validation, first {args.minilm} per hop, with MiniLM",
            await compare(kg, few, both),
        )
    if args.pq:
        await pathquestion(rankings, args.pq)


if __name__ == "__main__":
    asyncio.run(main())
