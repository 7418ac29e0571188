"""PoG graph side on MetaQA dev (1/2/3-hop), gold topic entities, LLM-free.

Prints, per hop:
- per-question time of each graph stage (median, p95): subgraph, clustering, reduction,
  paths, names, fuzzy ranking per embedder;
- subgraph sizes before/after reduction (entities, triples; median and p95), path counts and
  how often a bound was hit;
- the retrieval ceiling: share of questions whose gold answer (any of them) is
  (a) in the reduced subgraph, (b) on any candidate path, (c) on the top-W1 fuzzy-selected
  paths, per embedder; b@D / c@D restrict the candidates to paths of the question's hop count
  (what PoG explores when D_predict is right); c@Wmax is the top-W_max of (c) (Algorithm 2's
  "fuzzy selection only" strategy). Candidate paths are all paths of length 1..D_max from the
  topic entity (LLM-free mode: no D_predict). gold_resolved: some gold answer name is an
  entity of the KG (not the topic itself). "end entities@Wmax" is how many entities the
  top-W_max paths end in: clustered paths hold whole sets, so a high ceiling can come with
  large candidate sets.

KG: the bundled MetaQA store (`kgreason.kg.open_kg(KGSettings())`), or with `--kg memory` a
MemoryKG built from ../shared/data/kgqa/metaqa/kb_ids_incomplete. Run from the repo root:
    python bench/pog_bench.py [--limit 100] [--embedders minilm,static] [--variant pog]

Sections are functions over a `BenchContext` (see SECTIONS): "graph" (above), "nijmegen"
(reduction and path counts on the Figure 1 fixture) and "llm" (scripted LLM replies: LLM
calls and prompt tokens per question for each pruning strategy, bench/pog_llm_calls.py):
    python bench/pog_bench.py --sections llm --limit 5 --embedders static
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kgreason.embed.base import Embedder
from kgreason.kg.base import KnowledgeGraph
from kgreason.pog.fuzzy import FuzzySelector
from kgreason.pog.graph import prepare_graph
from kgreason.pog.paths import supplement_paths
from kgreason.pog.render import NameBook, displayed_ids
from kgreason.pog.settings import PoGSettings

#: KGREASON_SHARED_DATA (as for the tests), else ../shared/data beside the repository
SHARED = (
    os.environ.get("KGREASON_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared/data"
)
METAQA = Path(SHARED) / "kgqa" / "metaqa"


@dataclass
class BenchQuestion:
    hop: int
    text: str
    topic: str
    answers: list[str]


@dataclass
class BenchContext:
    kg: KnowledgeGraph
    questions: dict[int, list[BenchQuestion]]
    settings: PoGSettings
    embedders: dict[str, Embedder]
    args: argparse.Namespace


@dataclass
class Measure:
    times: dict[str, float] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    hits: dict[str, bool] = field(default_factory=dict)
    bounds: list[str] = field(default_factory=list)


def load_questions(hop: int, limit: int) -> list[BenchQuestion]:
    out = []
    with (METAQA / f"{hop}-hop" / "dev.txt").open() as f:
        for line in f:
            q, ans = line.rstrip("\n").split("\t")
            topic = re.findall(r"\[([^\]]+)\]", q)[0]
            out.append(BenchQuestion(hop, q, topic, ans.split("|")))
            if len(out) >= limit:
                break
    return out


def open_bench_kg(kind: str) -> KnowledgeGraph:
    if kind == "store":
        from kgreason.kg.open import open_kg
        from kgreason.kg.settings import KGSettings

        return open_kg(KGSettings())
    from kgreason.kg.base import Triple
    from kgreason.kg.memory import MemoryKG

    d = METAQA / "kb_ids_incomplete"
    ents = [ln.rstrip("\n").split("\t", 1)[1] for ln in (d / "entity2text.txt").open()]
    rels = [
        ln.rstrip("\n").split("\t", 1)[1].replace(" ", "_")
        for ln in (d / "relation2text.txt").open()
    ]
    triples = set()
    for f in ("train.tsv", "dev.tsv", "test_old.tsv"):
        for ln in (d / f).open():
            h, r, t = ln.split()
            triples.add(Triple(h, rels[int(r)], t))
    return MemoryKG(triples, {str(i): n for i, n in enumerate(ents)}, name="metaqa-ids")


def build_embedders(names: list[str]) -> dict[str, Embedder]:
    from kgreason.embed import build_embedder
    from kgreason.embed.settings import EmbedSettings

    return {n: build_embedder(EmbedSettings(backend=n)) for n in names}  # type: ignore[arg-type]


async def resolve(kg: KnowledgeGraph, name: str) -> str | None:
    hits = await kg.search(name, limit=1, fuzzy=False)
    return hits[0].id if hits else None


async def measure_question(
    kg: KnowledgeGraph, fuzzy: dict[str, FuzzySelector], settings: PoGSettings, q: BenchQuestion
) -> Measure | None:
    topic = await resolve(kg, q.topic)
    if topic is None:
        return None
    gold = {g for g in [await resolve(kg, a) for a in q.answers] if g} - {topic}
    m = Measure()
    prep = await prepare_graph(kg, [topic], settings)
    m.times.update(prep.timings_s)
    t0 = time.perf_counter()
    search = supplement_paths(
        prep.graph, [topic], n_topics=1, d_max=settings.d_max, max_paths=settings.max_paths
    )
    t1 = time.perf_counter()
    m.times["paths"] = t1 - t0
    book = NameBook(kg)
    await book.ensure(displayed_ids(search.paths))
    m.times["names"] = time.perf_counter() - t1
    m.bounds = [*prep.bounds_hit, *search.bounds_hit()]
    m.sizes = {
        "entities_before": prep.stats.entities,
        "entities_after": prep.stats.reduced_entities,
        "triples_before": prep.stats.triples,
        "triples_after": prep.stats.reduced_triples,
        "paths": len(search.paths),
    }
    on_path = {e for p in search.paths for e in p.entities()}
    at_d = [p for p in search.paths if p.length == q.hop]
    m.hits["gold_resolved"] = bool(gold)
    m.hits["a"] = bool(gold & prep.graph.entities())
    m.hits["b"] = bool(gold & on_path)
    m.hits["b@D"] = bool(gold & {e for p in at_d for e in p.entities()})
    indicator = q.text.replace("[", "").replace("]", "")
    for name, fz in fuzzy.items():
        t2 = time.perf_counter()
        top = fz.rank(indicator, search.paths, book.names, top=settings.w1)
        m.times[f"fuzzy[{name}]"] = time.perf_counter() - t2
        m.hits[f"c[{name}]"] = bool(gold & {e for s in top for e in s.path.entities()})
        top_w = {e for s in top[: settings.w_max] for e in s.path.entities()}
        m.hits[f"c@Wmax[{name}]"] = bool(gold & top_w)
        ends = {e for s in top[: settings.w_max] for e in s.path.end_entities()}
        m.sizes[f"end entities@Wmax[{name}]"] = len(ends)
        top_d = fz.rank(indicator, at_d, book.names, top=settings.w1)
        m.hits[f"c@D[{name}]"] = bool(gold & {e for s in top_d for e in s.path.entities()})
    return m


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def report(hop: int, ms: list[Measure], skipped: int) -> None:
    n = len(ms)
    print(f"\n== MetaQA {hop}-hop dev: {n} questions ({skipped} topic not in KG) ==")
    print("stage times per question (ms): median / p95")
    for k in ms[0].times if ms else []:
        xs = [m.times[k] * 1000 for m in ms]
        print(f"  {k:<22} {statistics.median(xs):9.1f} / {_pct(xs, 0.95):9.1f}")
    print("sizes: median / p95")
    for k in ms[0].sizes if ms else []:
        xs = [float(m.sizes[k]) for m in ms]
        print(f"  {k:<22} {statistics.median(xs):9.0f} / {_pct(xs, 0.95):9.0f}")
    bounded = sum(1 for m in ms if m.bounds)
    print(f"  questions that hit a bound: {bounded}")
    print("retrieval ceiling (share of questions with a gold answer ...):")
    for k in ms[0].hits if ms else []:
        print(f"  {k:<22} {sum(m.hits[k] for m in ms) / max(n, 1):7.1%}")


async def graph_section(ctx: BenchContext) -> None:
    fuzzy = {n: FuzzySelector(e) for n, e in ctx.embedders.items()}
    for hop, qs in ctx.questions.items():
        ms: list[Measure] = []
        skipped = 0
        for q in qs:
            m = await measure_question(ctx.kg, fuzzy, ctx.settings, q)
            if m is None:
                skipped += 1
            else:
                ms.append(m)
        report(hop, ms, skipped)


async def nijmegen_section(ctx: BenchContext) -> None:
    """Reduction and path counts where there is something to connect (MetaQA questions have
    one topic entity, so reduction keeps their neighbourhood whole): the paper's Figure 1
    question on the Freebase-style fixture, France + Nijmegen."""
    from kgreason.kg.loaders import Source, load_all
    from kgreason.kg.memory import MemoryKG
    from kgreason.pog.paths import topic_entity_paths

    nt = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "nijmegen" / "freebase.nt"
    if not nt.exists():
        print("\n(nijmegen fixture absent)")
        return
    triples, names = load_all([Source(nt)])
    kg = MemoryKG(triples, names, name="nijmegen")
    topics = ["m.0f4kq", "m.0d2hgq"]  # France, Nijmegen
    print("\n== Figure 1 question on tests/fixtures/nijmegen/freebase.nt (France, Nijmegen) ==")
    for variant in ("pog", "pog-e"):
        st = ctx.settings.model_copy(update={"variant": variant})
        prep = await prepare_graph(kg, topics, st)
        counts = []
        for depth in range(1, st.d_max + 1):
            res = topic_entity_paths(prep.graph, topics, depth, max_paths=st.max_paths)
            counts.append(f"D={depth}: {len(res.paths)}{' (bound hit)' if res.bound_hit else ''}")
        s_ = prep.stats
        print(
            f"  {variant:<6} entities {s_.entities} -> {s_.reduced_entities}, triples "
            f"{s_.triples} -> {s_.reduced_triples}, clustered edges {s_.clustered_edges}; "
            f"paths {', '.join(counts)}"
        )


async def llm_section(ctx: BenchContext) -> None:
    """LLM calls and prompt tokens per question for each pruning strategy, with scripted
    replies: bench/pog_llm_calls.py (imported here, since it imports this module)."""
    from bench.pog_llm_calls import llm_section as run_llm_section

    await run_llm_section(ctx)


SECTIONS: dict[str, Callable[[BenchContext], Awaitable[None]]] = {
    "graph": graph_section,
    "nijmegen": nijmegen_section,
    "llm": llm_section,
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--limit", type=int, default=100, help="questions per hop (from the start)")
    ap.add_argument("--hops", default="1,2,3")
    ap.add_argument("--embedders", default="minilm,static")
    ap.add_argument("--kg", choices=["store", "memory"], default="store")
    ap.add_argument("--variant", choices=["pog", "pog-e"], default="pog")
    ap.add_argument(
        "--sections", default="graph,nijmegen", help=f"comma list of {sorted(SECTIONS)}"
    )
    return ap.parse_args(argv)


async def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    t0 = time.perf_counter()
    kg = open_bench_kg(args.kg)
    print(f"KG {kg.name} opened in {time.perf_counter() - t0:.1f}s")
    t0 = time.perf_counter()
    embedders = build_embedders([e for e in args.embedders.split(",") if e])
    print(f"embedders {sorted(embedders)} loaded in {time.perf_counter() - t0:.1f}s")
    hops = [int(h) for h in args.hops.split(",")]
    ctx = BenchContext(
        kg=kg,
        questions={h: load_questions(h, args.limit) for h in hops},
        settings=PoGSettings(variant=args.variant),
        embedders=embedders,
        args=args,
    )
    s = ctx.settings
    print(f"settings: d_max={s.d_max} w1={s.w1} max_paths={s.max_paths} variant={s.variant}")
    for name in args.sections.split(","):
        await SECTIONS[name](ctx)


if __name__ == "__main__":
    asyncio.run(main())
