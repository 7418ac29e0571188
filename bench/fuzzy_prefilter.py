"""How much the static prefilter of fuzzy ranking changes it (pog/fuzzy.py, pog.fuzzy_prefilter).

With a transformer embedder, more than K candidate paths are first ranked by the vendored
static model, and only its best K are embedded and ranked by the transformer. Here, on the
bundled MetaQA KG, each dev question's LLM-free candidate paths are pooled with every other
sampled question's (a few thousand paths, as a hub question has), and for each question:
- recall: the share of MiniLM's own top W over the whole pool that the static top K keeps
  (the prefiltered top W equals it exactly when this is 100 %);
- top-1: whether MiniLM's best path survives (the LLM-free answer is read from it);
and the cost of each embedder per path text. Run from the repo root:

    python bench/fuzzy_prefilter.py [--questions 40] [--hops 3] [--w 80] [--hub]

--hub removes what could tell the pooled texts apart by question rather than by relation
(each text's start set, each question's topic mention), as on a hub where every path
starts from the same entity.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kgreason.aio import run_sync
from kgreason.embed.base import cosine_topk
from kgreason.embed.factory import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.eval.datasets import load
from kgreason.kg.open import open_kg
from kgreason.kg.settings import KGSettings
from kgreason.pog.fuzzy import EMBED_MAX_ITEMS
from kgreason.pog.graph import prepare_graph
from kgreason.pog.order_free import order_free_paths
from kgreason.pog.render import NameBook, displayed_ids, render_paths
from kgreason.pog.settings import PoGSettings

KS = (80, 128, 256, 512, 1024)


def path_texts(kg, topics: list[str], s: PoGSettings) -> list[str]:  # type: ignore[no-untyped-def]
    """The texts fuzzy ranking embeds for the LLM-free path search from `topics` (no ids,
    EMBED_MAX_ITEMS members a set)."""
    prep = run_sync(prepare_graph(kg, topics, s))
    paths = order_free_paths(
        prep.graph, list(prep.topics), d_max=s.d_max, max_paths=s.max_paths
    ).paths
    book = NameBook(kg)
    run_sync(book.ensure(displayed_ids(paths, EMBED_MAX_ITEMS)))
    return render_paths(paths, book.names, max_items=EMBED_MAX_ITEMS, with_ids=False)


def strip_start(text: str) -> str:
    """A path text without its start set ("{...} -> r -> {...}" -> "-> r -> {...}")."""
    cuts = [i for i in (text.find(" -> "), text.find(" <- ")) if i >= 0]
    return text[min(cuts) + 1 :] if cuts else text


def pooled_texts(n_questions: int, hops: int, hub: bool = False) -> tuple[list[str], list[str]]:
    """(questions, the pooled distinct path texts of their LLM-free path searches). `hub`:
    the texts without their start set and the questions without their topic mention, so no
    text can be told apart by its topic entity, as on a hub where every path shares it."""
    kg, s = open_kg(KGSettings()), PoGSettings()
    recs = [r for r in load("metaqa", hops=hops).records if r.topic_entities][:n_questions]
    questions, pool = [], {}
    for r in recs:
        topic = next(iter(r.topic_entities))
        hits = run_sync(kg.search(topic, limit=1, fuzzy=False))
        if not hits:
            continue
        for t in path_texts(kg, [hits[0].id], s):
            pool.setdefault(strip_start(t) if hub else t, None)
        q = re.sub(r"\[[^\]]*\]", "", r.question).strip() if hub else r.question
        questions.append(q.replace("[", "").replace("]", ""))
    return questions, list(pool)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--hops", type=int, default=3)
    ap.add_argument("--w", type=int, default=80, help="the W asked for (PoG's W1)")
    ap.add_argument(
        "--hub",
        action="store_true",
        help="texts without their start set, questions without their topic (see pooled_texts)",
    )
    args = ap.parse_args()
    questions, pool = pooled_texts(args.questions, args.hops, args.hub)
    kind = "hub-like (no start set, no topic mention)" if args.hub else "pooled"
    print(f"{len(questions)} MetaQA {args.hops}-hop dev questions, {len(pool):,} {kind} path texts")
    emb = {}
    for name in ("static", "minilm"):
        e = build_embedder(EmbedSettings(backend=name, cache_size=0))
        t0 = time.perf_counter()
        emb[name] = (e, e.embed(pool))
        dt = time.perf_counter() - t0
        print(f"  {name:<6} {1000 * dt / len(pool):6.2f} ms per path text ({dt:.1f} s)")
    recall = {k: 0.0 for k in KS}
    top1 = {k: 0 for k in KS}
    for q in questions:
        (ms, mm), (ss, sm) = emb["minilm"], emb["static"]
        ref, _ = cosine_topk(ms.embed([q])[0], mm, args.w)
        order, _ = cosine_topk(ss.embed([q])[0], sm, max(KS))
        for k in KS:
            kept = set(order[:k].tolist())
            recall[k] += len(kept & set(ref.tolist())) / len(ref)
            top1[k] += int(ref[0]) in kept
    n = max(len(questions), 1)
    print(f"\nK (paths MiniLM embeds)   recall of MiniLM's top {args.w}   MiniLM's top 1 kept")
    for k in KS:
        print(
            f"  {k:>5}                   {100 * recall[k] / n:6.1f} %"
            f"                   {top1[k]}/{n}"
        )


if __name__ == "__main__":
    main()
