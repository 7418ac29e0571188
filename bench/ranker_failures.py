"""Why a zero-shot ranking's top-1 is wrong on PathQuestion (issue 37): a failure breakdown.

PathQuestion gives each question its gold relation chain (topic#r1#e1#r2#ans), so every wrong
top-1 can be put in ONE class, checked in this order:
  topic-answer   (iv)  a gold answer is the topic itself (an answer set never holds a topic)
  no-gold-cand   (iii) no candidate path has the gold chain (each hop's forward relation, or
                       one of its clustered alternatives read forward: `parents` forward is
                       often clustered with, and shown as, `children` backward)
  same-chain     (iv)  the top path IS the gold chain; its first answer is another member
  tie            (iv)  the gold chain scores exactly as high as the top path
  order          (i)   the top path has the gold relations, in another order
  direction      (i)   the gold relations in the gold order, a hop taken backwards
  relation       (ii)  a wrong relation (the gold -> chosen pairs are counted)
Every ranking sees the SAME candidate paths (ranker_bench.compare's enumerator).

    python bench/ranker_failures.py [--pq 300] [--skip 0] [--rankings hop-aligned,order-aligned]
        [--encoders static,minilm] [--pairs 8]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from itertools import permutations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ranker_bench as rb

CLASSES = ("ok", "topic-answer", "no-gold-cand", "same-chain", "tie", "order", "direction")
CLASSES += ("relation",)


def follows(path, rels: tuple[str, ...], *, both: bool) -> bool:
    """Whether the path's hops are `rels` in order, read forward (or either way: `both`)."""
    hops = path.hops
    return len(hops) == len(rels) and all(
        any(r == g and (f or both) for r, f in h.relation_keys())
        for h, g in zip(hops, rels, strict=True)
    )


def reading(hop) -> str:
    """A hop's relation as read forward (`~r`: only backwards)."""
    fwd = [r for r, f in hop.relation_keys() if f]
    return fwd[0] if fwd else f"~{hop.relation}"


def rankings(names: list[str], encoders: list[str]) -> dict[str, rb.Ranking]:
    from kgreason.embed import build_embedder
    from kgreason.embed.settings import EmbedSettings
    from kgreason.pog.fuzzy import FuzzySelector
    from kgreason.pog.ranker import zeroshot

    out: dict[str, rb.Ranking] = {}
    for enc in encoders:
        emb = build_embedder(EmbedSettings(backend=enc))
        make = {
            "whole-path": lambda e=emb: rb.today(FuzzySelector(e)),
            "hop-aligned": lambda e=emb: rb.scorer(zeroshot.HopAlignedRanker(e)),
            "order-aligned": lambda e=emb: rb.scorer(zeroshot.OrderAlignedRanker(e)),
        }
        for n in names:
            out[f"{n} ({enc})"] = make[n]()
    return out


async def breakdown(kg, qfile: str, limit: int, skip: int, ranks: dict[str, rb.Ranking]) -> dict:
    from kgreason.eval.loaders import load_pathquestion
    from kgreason.eval.metrics import normalize_answer
    from kgreason.eval.ranker_data import resolve_topics
    from kgreason.pog.ranker.supervision import PathEnumerator, answer_set, first_answer
    from kgreason.pog.render import NameBook, displayed_ids
    from kgreason.pog.settings import PoGSettings

    recs = load_pathquestion(rb.PQ / "PathQuestion" / f"{qfile}.txt").records[skip : skip + limit]
    enum = PathEnumerator(kg, PoGSettings())
    book = NameBook(kg)
    counts = {k: Counter() for k in ranks}
    pairs = {k: Counter() for k in ranks}
    for r in recs:
        topics = await resolve_topics(kg, r)
        if not topics:
            continue
        paths = await enum.paths(topics)
        gold = {normalize_answer(g) for a in r.answers for g in a.surface_forms()}
        gold_rels = tuple(r.gold_path[1::2])
        gold_idx = [i for i, p in enumerate(paths) if follows(p, gold_rels, both=False)]
        await book.ensure(displayed_ids(paths, 4))
        await book.ensure(topics)
        topic_names = {normalize_answer(book.get(t)) for t in topics}
        for name, rank in ranks.items():
            if not paths:
                counts[name]["no-gold-cand"] += 1
                continue
            s = np.asarray(rank(r.question, topics, paths, topics, book.names), dtype=np.float64)
            top = int(np.lexsort((np.arange(len(s)), -s))[0])
            ans = answer_set(paths[top], topics)
            await book.ensure(ans)
            first = first_answer(ans, book.names)
            if first is not None and normalize_answer(book.get(first)) in gold:
                cls = "ok"
            elif gold & topic_names:
                cls = "topic-answer"
            elif not gold_idx:
                cls = "no-gold-cand"
            elif top in gold_idx:
                cls = "same-chain"
            elif max(s[i] for i in gold_idx) >= s[top]:
                cls = "tie"
            elif any(follows(paths[top], o, both=True) for o in permutations(gold_rels)):
                cls = "direction" if follows(paths[top], gold_rels, both=True) else "order"
            else:
                cls = "relation"
                chosen = [reading(h) for h in paths[top].hops]
                for g, t in zip(gold_rels, chosen, strict=False):
                    if g != t:
                        pairs[name][(g, t)] += 1
                if len(chosen) != len(gold_rels):
                    pairs[name][(f"{len(gold_rels)} hops", f"{len(chosen)} hops")] += 1
            counts[name][cls] += 1
    return {"counts": counts, "pairs": pairs}


def print_breakdown(title: str, res: dict, n_pairs: int) -> None:
    print(f"\n== {title} ==")
    print(f"{'ranking':<28}" + "".join(f"{c:>13}" for c in (*CLASSES, "n")))
    for name, c in res["counts"].items():
        n = sum(c.values())
        print(f"{name:<28}" + "".join(f"{c[k]:>13}" for k in CLASSES) + f"{n:>13}")
    for name, p in res["pairs"].items():
        if p and n_pairs:
            top = ", ".join(f"{g}->{t} {k}" for (g, t), k in p.most_common(n_pairs))
            print(f"  {name}: gold->chosen {top}")


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pq", type=int, default=300, help="questions per file")
    ap.add_argument("--skip", type=int, default=0, help="start at this question (a tuning slice)")
    ap.add_argument("--rankings", default="hop-aligned,order-aligned")
    ap.add_argument("--encoders", default="static")
    ap.add_argument("--files", default=",".join(rb.PQ_FILES))
    ap.add_argument("--pairs", type=int, default=8, help="gold->chosen relation pairs shown")
    args = ap.parse_args(argv)
    from kgreason.kg.memory import MemoryKG

    ranks = rankings(args.rankings.split(","), args.encoders.split(","))
    total = {k: Counter() for k in ranks}
    for qfile in args.files.split(","):
        kb = rb.PQ / "PathQuestion" / f"{rb.PQ_FILES[qfile]}.txt"
        rows = [ln.rstrip("\n").split("\t") for ln in kb.open(encoding="utf-8")]
        kg = MemoryKG([tuple(r) for r in rows if len(r) == 3], name=kb.stem)
        res = await breakdown(kg, qfile, args.pq, args.skip, ranks)
        print_breakdown(f"{qfile}, questions {args.skip}-{args.skip + args.pq}", res, args.pairs)
        for k in ranks:
            total[k].update(res["counts"][k])
    print_breakdown("all files", {"counts": total, "pairs": {}}, 0)
    print("\nHits@1 (ok / n):")
    for k, c in total.items():
        print(f"  {k:<28} {100 * c['ok'] / max(sum(c.values()), 1):5.1f}")


if __name__ == "__main__":
    asyncio.run(main())
