"""Can the zero-shot ranking's weights be chosen on a KG without one labelled question?
(issue 37: "label-free training on the PathQuestion KG")

The order-aligned ranking has two weights that decide a path's LENGTH: tau (what a hop
matched to a word must beat) and rho (what a question word no hop answers costs). Its
defaults were chosen on PathQuestion questions 300-600, with their answers. Here they are
chosen per KG from questions generated from that KG's own triples instead (synth.py, seed
0, --per-hop per hop count), with each relation word reworded with probability
--synonyms by one of its 8 nearest words in the static vocabulary (label_free_anchored.py's
`reword`: generated questions otherwise name their relations literally, and then every
length looks right). Each grid point answers every generated question through `PoG.ask`
(the default search, revisits on), and the point with the most right first answers is
that KG's choice (ties: the first in grid order). No real question is read until the
choice is made; then the choice and the defaults answer questions lo..hi of the file
(0-300 by default: no weight was chosen on them).

    python bench/label_free_weights.py [--files PQ-2H,...] [--per-hop 200] [--lo 0 --hi 300]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ranker_bench as rb
from label_free_anchored import generated, parse_args
from ranker_loko import open_file_kg, questions

GRID = [(tau, rho) for tau in (0.05, 0.1, 0.15) for rho in (0.05, 0.1, 0.15, 0.2)]


@functools.cache
def static():
    from kgreason.embed.static import StaticEmbedder

    return StaticEmbedder()


def hits1(kg, qs, tau: float, rho: float) -> float:
    """Right first answers (of an abstained question: its first candidate), %, with
    `pog.ranker = auto`'s zero-shot selector around the given weights."""
    import kgreason
    from kgreason.config import Settings
    from kgreason.eval.metrics import normalize_answer
    from kgreason.pog.ranker.factory import unfamiliar_kg_selector
    from kgreason.pog.ranker.zeroshot import OrderAlignedRanker

    s = Settings()
    ranking = functools.partial(OrderAlignedRanker, tau=tau, rho=rho)
    fuzzy = unfamiliar_kg_selector(s.pog, static(), ranking)  # type: ignore[arg-type]
    pog = kgreason.PoG.from_settings(s, kg=kg, embedder=static(), llm_free=True, fuzzy=fuzzy)
    ok = 0
    for q in qs:
        r = pog.ask(q.text, list(q.topic_ids))
        shown = r.answers or (r.candidates if r.abstained else [])
        gold = {normalize_answer(g) for g in q.gold}
        ok += bool(shown) and normalize_answer(shown[0].name) in gold
    return 100 * ok / max(len(qs), 1)


async def main(argv: list[str] | None = None) -> None:
    from kgreason.pog.ranker.zeroshot import OrderAlignedRanker

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--files", default=",".join(rb.PQ_FILES))
    ap.add_argument("--per-hop", type=int, default=200)
    args = parse_args(ap, argv, lo=0, hi=300)
    default = (OrderAlignedRanker.tau, OrderAlignedRanker.rho)
    print(f"grid (tau, rho): {GRID}; defaults {default}")
    for name in args.files.split(","):
        kg = open_file_kg(name, args.work)
        made = await generated(kg, args.per_hop, args.synonyms)
        on_made = {g: hits1(kg, made, *g) for g in GRID}
        pick = max(GRID, key=lambda g: on_made[g])  # max keeps the first of a tie
        row = " ".join(f"{on_made[g]:4.1f}" for g in GRID)
        print(f"{name}: {len(made)} generated questions, Hits@1 per grid point: {row}")
        real = await questions(kg, name, args.lo, args.hi)
        print(f"  chosen without labels {pick}: real questions {args.lo}-{args.hi} "
              f"{hits1(kg, real, *pick):5.1f}   defaults {default}: "
              f"{hits1(kg, real, *default):5.1f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
