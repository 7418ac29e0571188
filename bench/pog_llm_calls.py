"""PoG's LLM cost per question for each pruning strategy (Algorithm 2), with scripted replies.

For MetaQA dev questions (1/2/3-hop, gold topic entities from the [brackets]) the full PoG
pipeline runs with a scripted LLM (kgreason.llm.testing.ScriptedLLM) that knows each
question's relation chain (from qa_dev_qtype.txt) and otherwise reads only the paths it is
shown: precise selection prefers paths following the chain, the sufficiency check says {Yes}
when a shown path follows it exactly, the answer is that path's end set. Cost therefore
reflects PoG's control flow and prompt sizes, not a real model's behaviour.

Prints per hop, strategy and summary mode: LLM calls per question as HTTP requests (mean,
max) and as the PoG paper counts them (one per reasoning step: a re-ask or the extra 40-path
batches of one precise selection are not paper calls), precise_select requests and paper
calls, prompt tokens per question (cl100k_base, counted offline; mean, p95), the phase
distribution and the share answered with a gold answer. `--summary` / `--no-summary` runs one
mode; by default both run in the same process, so the figures compare like for like: with the
summary (the default) it REPLACES the raw paths in the evaluate/answer/final prompts; without
it the raw paths are shown and there is no summarise call (Table 6's ablation). The figures
of earlier releases (summary sent beside the paths, sets cut at 8 members, three-step default)
are printed beneath for reference; `--set-items 8` restores the old set cut.
Run from the repo root:
    python bench/pog_llm_calls.py [--limit 10] [--hops 1,2,3] [--kg memory|store]
As a section of bench/pog_bench.py: `llm_section(ctx)`.
SBERT vs the learned path ranker as the fuzzy stage (W1 at equal top-W1 recall, calls and
prompt tokens): `python bench/pog_llm_calls.py --fuzzy-stage` (bench/pog_fuzzy_stage.py).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.pog_bench import METAQA, BenchContext, open_bench_kg
from tests.pog.datasets import metaqa_chain
from tests.pog.scripted_chain import chain_llm
from tests.pog.scripted_pog import prefix_match, shown_paths

from kgreason.embed.base import Embedder
from kgreason.kg.base import KnowledgeGraph
from kgreason.llm.base import Message
from kgreason.llm.testing import Responder, ScriptedLLM
from kgreason.llm.tokens import TokenCounter
from kgreason.pog.pipeline import PoG
from kgreason.pog.settings import PoGSettings

STRATEGIES = ("fuzzy", "fuzzy-precise", "fuzzy-branch", "three-step")
#: this bench before issue 11 (main @ 9f6bb23, same scripted replies, 10 MetaQA dev questions
#: per hop, static embedder, this 2-core machine): the summary sent beside the
#: paths, sets cut at 8 members, raw calls only. (hop, strategy) -> (calls, prompt tokens)
#: per question. The README's earlier "3-hop three-step 7.0 calls, 15.8k tokens" is the
#: same setting measured before the ranker and linking changes.
OLD_FIGURES = {
    (1, "fuzzy"): (4.0, 1875),
    (1, "fuzzy-precise"): (4.0, 1875),
    (1, "fuzzy-branch"): (4.0, 1875),
    (1, "three-step"): (4.0, 1875),
    (2, "fuzzy"): (5.4, 3201),
    (2, "fuzzy-precise"): (4.9, 3110),
    (2, "fuzzy-branch"): (4.9, 3118),
    (2, "three-step"): (4.9, 3110),
    (3, "fuzzy"): (6.8, 5372),
    (3, "fuzzy-precise"): (6.1, 11334),
    (3, "fuzzy-branch"): (6.6, 7523),
    (3, "three-step"): (6.8, 16013),
}


def load(hop: int, limit: int) -> list[tuple[str, str, list[str], list[str]]]:
    """(question, topic name, gold answers, relation chain) for the first `limit` questions."""
    out = []
    qs = (METAQA / f"{hop}-hop" / "dev.txt").open(encoding="utf-8")
    types = (METAQA / f"{hop}-hop" / "qa_dev_qtype.txt").open(encoding="utf-8")
    for line, qtype in zip(qs, types, strict=False):
        q, ans = line.rstrip("\n").split("\t")
        topic = q[q.index("[") + 1 : q.index("]")]
        out.append((q, topic, ans.split("|"), [r for r, _ in metaqa_chain(qtype.strip())]))
        if len(out) >= limit:
            break
    return out


def scripted(question: str, topic: str, chain: list[str]) -> ScriptedLLM:
    """The chain-following scripted LLM, with replies for the fallback stages too. Its
    summary keeps the shown paths that best follow the chain (a model "extracting relevant
    triples", section 4.4), not just the first path: the summary replaces the paths in the
    later prompts, so a summary that drops the right path would cost the answer."""
    llm = chain_llm(question, topic, chain, fallbacks=True)
    return ScriptedLLM({**llm.script, "summarise": relevant_summary(chain)})


def relevant_summary(chain: list[str]) -> Responder:
    score = prefix_match(chain)

    def reply(messages: list[Message]) -> str:
        paths = shown_paths(messages)
        if not paths:
            return "summary: no path given"
        best = max(score(p) for p in paths)
        return "summary: " + "\n".join(p for p in paths if score(p) == best)

    return reply


def _p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.95 * len(xs)))] if xs else 0.0


async def run(
    kg: KnowledgeGraph,
    embedder: Embedder,
    hops: list[int],
    limit: int,
    summaries: tuple[bool, ...] = (True, False),
    set_items: int | None = None,
) -> None:
    counter = TokenCounter()
    print(
        "hop strategy      summary  n  calls(mean/max) paper(mean) precise(raw/paper)"
        "  prompt_tok(mean/p95) phases  gold"
    )
    for hop in hops:
        questions = load(hop, limit)
        for strategy in STRATEGIES:
            for summary in summaries:
                s = PoGSettings(strategy=strategy, summary=summary, set_items=set_items)
                await _one(kg, embedder, counter, hop, questions, s)
    print("\nbefore issue 11 (summary beside the paths, sets cut at 8, 10 questions per hop):")
    for (hop, strategy), (c, tok) in OLD_FIGURES.items():
        if hop in hops:
            print(f"{hop:>3} {strategy:<13} old     {c:6.1f} calls      {tok:8,} prompt tokens")


async def _one(
    kg: KnowledgeGraph,
    embedder: Embedder,
    counter: TokenCounter,
    hop: int,
    questions: list[tuple[str, str, list[str], list[str]]],
    s: PoGSettings,
) -> None:
    pog = PoG(kg, None, embedder, s)
    calls, paper, precise, precise_paper, tokens, gold_hits = [], [], [], [], [], 0
    phases: Counter[str] = Counter()
    t0 = time.perf_counter()
    for q, topic, gold, chain in questions:
        pog.llm = llm = scripted(q, topic, chain)
        r = await pog.ask_async(q)
        phases[r.phase or r.error_kind or "?"] += 1
        calls.append(len(llm.calls))
        paper.append(r.usage["total"]["paper_calls"])
        precise.append(llm.stages_called().count("precise_select"))
        precise_paper.append(r.usage.get("precise_select", {}).get("paper_calls", 0))
        tokens.append(sum(counter.count_messages(c.messages) for c in llm.calls))
        gold_hits += bool({a.name for a in r.answers} & set(gold))
    n = len(questions)
    mode = "summary" if s.summary else "raw"
    print(
        f"{hop:>3} {s.strategy:<13} {mode:<7} {n:>3} {statistics.mean(calls):6.1f}/{max(calls):<4}"
        f"      {statistics.mean(paper):5.1f}"
        f"      {statistics.mean(precise):5.1f}/{statistics.mean(precise_paper):<5.1f}"
        f"      {statistics.mean(tokens):8.0f}/{_p95(tokens):<8.0f}"
        f" {dict(phases)} {gold_hits}/{n}  ({time.perf_counter() - t0:.1f}s)",
        flush=True,
    )


async def llm_section(ctx: BenchContext) -> None:
    """bench/pog_bench.py section: the first embedder, the context's hops and limit."""
    embedder = next(iter(ctx.embedders.values()))
    await run(ctx.kg, embedder, sorted(ctx.questions), ctx.args.limit)


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--limit", type=int, default=10, help="questions per hop")
    ap.add_argument("--hops", default="1,2,3")
    ap.add_argument("--kg", choices=["store", "memory"], default="memory")
    ap.add_argument("--embedder", default="static", help="minilm | static")
    ap.add_argument("--fuzzy-stage", action="store_true", help="SBERT vs the learned ranker")
    ap.add_argument(
        "--summary",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="only with (--summary) or without (--no-summary) path summaries; default both",
    )
    ap.add_argument("--set-items", type=int, default=None, help="entity-set member cap")
    args = ap.parse_args(argv)
    if args.fuzzy_stage:
        from bench.pog_fuzzy_stage import main as fuzzy_stage

        return await fuzzy_stage(["--limit", str(args.limit), "--hops", args.hops])
    from kgreason.embed import build_embedder
    from kgreason.embed.settings import EmbedSettings

    kg = open_bench_kg(args.kg)
    embedder = build_embedder(EmbedSettings(backend=args.embedder))
    summaries = (True, False) if args.summary is None else (args.summary,)
    hops = [int(h) for h in args.hops.split(",")]
    await run(kg, embedder, hops, args.limit, summaries, args.set_items)


if __name__ == "__main__":
    asyncio.run(main())
