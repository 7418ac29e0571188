"""LLM-free mode: everything of PoG that needs no LLM, returning CANDIDATES, never an answer.

    link by name -> subgraph -> clustering -> reduction -> entity paths -> FuzzySelect

Differences from PoG, all forced by the absence of an LLM and labelled in the result:
- topic entities: given ids, else `[bracketed]` mentions, else the longest word n-grams of the
  question that the KG's name search matches (case/diacritic-insensitive); when some match
  with the exact spelling and case (proper names: "France"), only those are kept, so common
  words that happen to name a node ("country") do not become topic entities;
- no question analysis: the topic order is the order found, and every length PoG could ever
  search is used (1 <= length <= |Topic| * D_max, the supplement condition), since there is no
  D_predict;
- the indicator of FuzzySelect is the question itself;
- when no path joins all topic entities, each topic entity's own paths (length <= D_max) are
  ranked instead, and the trace says so (`fallback`);
- the result has mode="llm-free", `answers` EMPTY, `candidates` = entities of the top-ranked
  paths (the end sets for one topic entity; the non-topic entities on the path otherwise),
  ranked by path rank, and a trace entry saying these are retrieval candidates.

API:
    await link_by_name(kg, question, *, max_ngram=6) -> list[TopicEntity]
    await explore_llm_free(kg, fuzzy, settings, topics, question) -> LLMFreeRun
    await run_llm_free(kg, fuzzy, settings, question, topic_entities=None, *,
                       top_k=None, max_candidates=50) -> PoGResult
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgreason.kg.base import UNNAMED, KnowledgeGraph
from kgreason.pog.fuzzy import FuzzySelector, ScoredPath
from kgreason.pog.graph import PreparedGraph, prepare_graph
from kgreason.pog.paths import PathSearch, find_entity_paths, supplement_paths
from kgreason.pog.render import NameBook, displayed_ids
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import AnswerEntity, PoGResult, ReasoningPath, TopicEntity

LABEL = (
    "LLM-free mode: candidates are entities on the paths ranked most similar to the question; "
    "they are retrieval candidates, not an answer produced by PoG."
)
_BRACKET = re.compile(r"\[([^\[\]]+)\]")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "from",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "how",
        "is",
        "are",
        "was",
        "were",
        "did",
        "do",
        "does",
        "be",
        "been",
        "that",
        "this",
        "these",
        "those",
        "and",
        "or",
        "film",
        "films",
        "movie",
        "movies",
    ]
)


async def link_by_name(
    kg: KnowledgeGraph, question: str, *, max_ngram: int = 6
) -> list[TopicEntity]:
    mentions = _BRACKET.findall(question)
    out: list[TopicEntity] = []
    if mentions:
        for m in mentions:
            hits = [h for h in await kg.search(m, limit=1, fuzzy=False)]
            if hits:
                out.append(TopicEntity(hits[0].id, hits[0].name, m, hits[0].score))
        return out
    words = re.findall(r"[\w'’.-]+", question)
    used = [False] * len(words)
    found: list[tuple[int, TopicEntity]] = []
    for n in range(min(max_ngram, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            if any(used[i : i + n]):
                continue
            gram = words[i : i + n]
            if all(w.lower() in _STOP for w in gram) or (n == 1 and len(gram[0]) < 3):
                continue
            text = " ".join(gram).strip(".")
            hits = await kg.search(text, limit=1, fuzzy=False)
            if hits:
                found.append((i, TopicEntity(hits[0].id, hits[0].name, text, hits[0].score)))
                used[i : i + n] = [True] * n
    exact = [f for f in found if f[1].name == f[1].keyword]
    return [t for _, t in sorted(exact or found, key=lambda x: x[0])]


@dataclass
class LLMFreeRun:
    prepared: PreparedGraph
    search: PathSearch
    ranked: list[ScoredPath]
    book: NameBook
    timings_s: dict[str, float] = field(default_factory=dict)
    #: non-empty when the paths are not entity paths through all topic entities
    fallback: str = ""


async def explore_llm_free(
    kg: KnowledgeGraph,
    fuzzy: FuzzySelector,
    settings: PoGSettings,
    topics: Sequence[str],
    question: str,
    *,
    top_w: int | None = None,
) -> LLMFreeRun:
    """Graph stages + fuzzy ranking (top `top_w`, default W1), each timed."""
    prepared = await prepare_graph(kg, topics, settings)
    timings = dict(prepared.timings_s)
    t0 = time.perf_counter()
    search = supplement_paths(
        prepared.graph,
        list(prepared.topics),
        n_topics=len(prepared.topics),
        d_max=settings.d_max,
        max_paths=settings.max_paths,
    )
    fallback = ""
    if not search.paths and len(prepared.topics) > 1:
        # no path joins all topic entities (a wrong link, or a KG gap): rank each topic
        # entity's own paths instead, and say so
        fallback = "no entity path through all topic entities: paths from each topic entity"
        graph = prepared.clustered
        per_topic = [
            find_entity_paths(
                graph, [t], min_len=1, max_len=settings.d_max, max_paths=settings.max_paths
            )
            for t in prepared.topics
        ]
        search = PathSearch(
            [p for r in per_topic for p in r.paths],
            prepared.topics,
            1,
            settings.d_max,
            graph,
            bound_hit=any(r.bound_hit for r in per_topic),
            bound_reason="; ".join(r.bound_reason for r in per_topic if r.bound_hit),
            expansions=sum(r.expansions for r in per_topic),
        )
    t1 = time.perf_counter()
    timings["paths"] = t1 - t0
    book = NameBook(kg)
    await book.ensure(displayed_ids(search.paths))
    t2 = time.perf_counter()
    timings["names"] = t2 - t1
    indicator = question.replace("[", "").replace("]", "")
    ranked = fuzzy.rank(indicator, search.paths, book.names, top=top_w or settings.w1)
    timings["fuzzy"] = time.perf_counter() - t2
    return LLMFreeRun(prepared, search, ranked, book, timings, fallback)


def rerank_by_length(ranked: Sequence[ScoredPath], penalty: float) -> list[ScoredPath]:
    """Order by fuzzy score minus `penalty` per hop beyond the first (stable on ties)."""
    if penalty == 0:
        return list(ranked)
    return sorted(ranked, key=lambda sp: -(sp.score - penalty * (sp.path.length - 1)))


def candidate_ids(paths: Sequence[ReasoningPath], topics: Sequence[str]) -> list[str]:
    """Entities of ranked paths, in rank order: end sets for a single topic entity, the
    non-topic entities along the path (in hop order) for entity paths."""
    skip = set(topics)
    out: dict[str, None] = {}
    for p in paths:
        if len(set(p.entity_list)) <= 1:
            ids: Sequence[str] = p.end_entities()
        else:
            ids = [e for h in p.hops for e in h.dst]
        for e in ids:
            if e not in skip:
                out.setdefault(e)
    return list(out)


async def run_llm_free(
    kg: KnowledgeGraph,
    fuzzy: FuzzySelector,
    settings: PoGSettings,
    question: str,
    topic_entities: Sequence[str] | None = None,
    *,
    top_k: int | None = None,
    max_candidates: int = 50,
) -> PoGResult:
    """`top_k` paths (default W_max) are returned as `paths`, materialized with triples."""
    result = PoGResult(question=question, mode="llm-free")
    result.trace.append({"stage": "llm-free", "note": LABEL})
    t_start = time.perf_counter()
    if topic_entities:
        names = await kg.names(list(topic_entities))
        topics = [TopicEntity(t, names.get(t, t)) for t in topic_entities if t in names]
        unknown = [t for t in topic_entities if t not in names]
        if unknown:
            result.error_kind, result.error = "unknown-entity", f"not in {kg.name}: {unknown}"
            return result
    else:
        topics = await link_by_name(kg, question)
    result.topic_entities = topics
    if not topics:
        result.error_kind = "unknown-entity"
        result.error = f"no topic entity of the question found by name in {kg.name}"
        return result
    run = await explore_llm_free(kg, fuzzy, settings, [t.id for t in topics], question)
    result.subgraph = run.prepared.stats
    result.bounds_hit = [*run.prepared.bounds_hit, *run.search.bounds_hit()]
    result.timings_s = dict(run.timings_s)
    result.trace.append(
        {
            "stage": "graph",
            "reduction": run.prepared.reduction.note,
            "paths": len(run.search.paths),
            "length": [run.search.min_len, run.search.max_len],
            **({"fallback": run.fallback} if run.fallback else {}),
        }
    )
    if not run.prepared.subgraph.triples:
        result.error_kind, result.error = "empty-subgraph", "topic entities have no edges"
        return result
    if not run.ranked:
        result.error_kind = "no-paths"
        result.error = f"no path of length <= {run.search.max_len} from the topic entities"
        return result
    # one topic entity: the answer ends a path of unknown length, so prefer shorter paths;
    # several: paths must join them, their length is the graph's, not a choice to penalise
    penalty = settings.llm_free_length_penalty if len(topics) == 1 else 0.0
    learned = getattr(fuzzy, "answers", False)  # a trained ranker (pog/ranker): it answers
    penalty = 0.0 if getattr(fuzzy, "ranker", None) is not None else penalty
    ranked = rerank_by_length(run.ranked, penalty)
    top = [s.path for s in ranked[: top_k or settings.w_max]]
    result.paths = run.search.materialize(top)
    cands = candidate_ids([s.path for s in ranked], [t.id for t in topics])
    await run.book.ensure(cands[: max_candidates * 2])
    named = [c for c in cands if run.book.names.get(c) not in (None, UNNAMED)]
    result.candidates = [AnswerEntity(run.book.get(c), c) for c in named[:max_candidates]]
    if learned:
        from kgreason.pog.ranker.answer import apply_answer

        await apply_answer(result, ranked, run.book, [t.id for t in topics])
    cited = result.paths and [t for p in result.paths for t in p.triples()]
    if cited:
        ok = await kg.contains(cited)
        result.unverified_triples = [t for t, k in zip(cited, ok, strict=True) if not k]
    result.timings_s["total"] = time.perf_counter() - t_start
    return result
