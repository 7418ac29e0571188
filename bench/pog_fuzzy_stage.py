"""SBERT vs the learned path ranker as PoG's fuzzy stage (issue 14), with scripted replies.

On MetaQA dev questions whose TEMPLATE the bundled ranker never saw in training (the
validation side of its template split), over the bundled KG:
1. top-W1 recall: share of questions where a path following the gold relation chain is among
   the top W1 of the candidate paths of the gold length (what PoG's topic-entity-path phase
   ranks), for SBERT (static embedder, scored against the indicator PoG's scripted analysis
   gives) and for the ranker (scored against the question), for several W1;
2. the smallest W1 at which the ranker's recall >= SBERT's at W1=80 (the paper's value);
3. PoG with the chain-following scripted LLM (bench/pog_llm_calls.py) for three-step and
   fuzzy+precise: LLM calls, precise-selection calls and prompt tokens per question, SBERT at
   W1=80 vs the ranker at that W1 (and at 80).
Run from the repo root:  python bench/pog_fuzzy_stage.py [--limit 30] [--ranker DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.pog.datasets import metaqa_chain
from tests.pog.scripted_chain import chain_llm

from kgreason.embed import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.eval.datasets import load
from kgreason.eval.ranker_data import template_split
from kgreason.kg.open import open_kg
from kgreason.kg.settings import KGSettings
from kgreason.llm.tokens import TokenCounter
from kgreason.pog.fuzzy import FuzzySelector
from kgreason.pog.pipeline import PoG
from kgreason.pog.ranker.factory import bundled_ranker_path, load_checked
from kgreason.pog.ranker.features import path_keys
from kgreason.pog.ranker.selector import RankerSelector
from kgreason.pog.ranker.supervision import PathEnumerator, TrainQuestion
from kgreason.pog.render import NameBook, displayed_ids
from kgreason.pog.settings import PoGSettings

W1S = (1, 2, 3, 5, 10, 20, 40, 80)


def indicator(topic: str, chain) -> str:
    """The indicator the scripted analysis reply gives (tests/pog/scripted_chain.py)."""
    parts = [f'"{topic}"']
    for i, (r, _) in enumerate(chain):
        parts += [r.replace("_", " "), "answer(the answer)" if i == len(chain) - 1 else f"x{i}"]
    return " - ".join(parts)


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--limit", type=int, default=30, help="validation questions per hop")
    ap.add_argument("--hops", default="1,2,3")
    ap.add_argument("--ranker", default=str(bundled_ranker_path()))
    args = ap.parse_args(argv)
    kg = open_kg(KGSettings())
    static = build_embedder(EmbedSettings(backend="static"))
    ranker, warnings = load_checked(Path(args.ranker), kg)
    for w in warnings:
        print("warning:", w)
    sbert, learned = FuzzySelector(static), RankerSelector(ranker, static)
    enum, book, counter = PathEnumerator(kg, PoGSettings()), NameBook(kg), TokenCounter()
    for hop in [int(h) for h in args.hops.split(",")]:
        recs = [r for r in load("metaqa", hops=hop).records if r.qtype]
        tq = [TrainQuestion(r.id, r.question, tuple(r.topic_entities), (), (), hop) for r in recs]
        _, va = template_split(tq)
        cases = []
        for i in va[: args.limit]:
            r = recs[i]
            topic = next(iter(r.topic_entities))
            hits = await kg.search(topic, limit=1, fuzzy=False)
            if hits:
                cases.append((r, hits[0].id, topic, metaqa_chain(r.qtype)))
        recall = {("sbert", w): 0 for w in W1S} | {("learned", w): 0 for w in W1S}
        for r, tid, topic, chain in cases:
            paths = [p for p in await enum.paths([tid]) if p.length == len(chain)]
            await book.ensure(displayed_ids(paths, 4))
            await book.ensure([tid])
            for name, sel, text in (
                ("sbert", sbert, indicator(topic, chain)),
                ("learned", learned, r.question),
            ):
                ranked = sel.rank(text, paths, book.names)
                pos = next(
                    (k for k, sp in enumerate(ranked) if path_keys(sp.path) == tuple(chain)), None
                )
                for w in W1S:
                    recall[(name, w)] += pos is not None and pos < w
        n = max(len(cases), 1)
        print(f"\n== {hop}-hop: {len(cases)} validation-template questions ==")
        print("top-W1 recall (%):  W1 = " + " ".join(f"{w:>5}" for w in W1S))
        for name in ("sbert", "learned"):
            print(f"  {name:<17}" + "".join(f"{100 * recall[(name, w)] / n:6.1f}" for w in W1S))
        target = recall[("sbert", 80)]
        w_small = next((w for w in W1S if recall[("learned", w)] >= target), 80)
        print(f"  smallest W1 with learned recall >= SBERT@80: {w_small}")
        print("  strategy    fuzzy     W1  calls  precise  prompt_tok  gold")
        for strategy in ("three-step", "precise"):
            for name, w1 in (("sbert", 80), ("learned", w_small), ("learned", 80)):
                s = PoGSettings(strategy=strategy, w1=w1)
                fz = sbert if name == "sbert" else learned
                pog = PoG(kg, None, static, s, fuzzy=fz)
                calls, precise, tokens, gold = [], [], [], 0
                for r, tid, topic, chain in cases:
                    pog.llm = llm = chain_llm(
                        r.question, topic, [c for c, _ in chain], fallbacks=True
                    )
                    res = await pog.ask_async(r.question, [tid])
                    calls.append(len(llm.calls))
                    precise.append(llm.stages_called().count("precise_select"))
                    tokens.append(sum(counter.count_messages(c.messages) for c in llm.calls))
                    gold += bool({a.name for a in res.answers} & {a.name for a in r.answers})
                print(
                    f"  {strategy:<11} {name:<8} {w1:>3} {statistics.mean(calls):6.2f}"
                    f" {statistics.mean(precise):7.2f} {statistics.mean(tokens):11.0f}"
                    f"  {gold}/{len(cases)}"
                )


if __name__ == "__main__":
    asyncio.run(main())
