"""LLM-free mode: everything of PoG that needs no LLM, returning CANDIDATES, never an answer.

    link by name -> subgraph -> clustering -> reduction -> entity paths -> FuzzySelect

Differences from PoG, all forced by the absence of an LLM and labelled in the result:
- topic entities: given ids or names, else `[bracketed]` mentions, else the longest word
  spans of the question that match a KG name exactly (up to case, spacing, underscores,
  punctuation, diacritics) or closely enough (pog.link_threshold), each reported with its
  score and method (linking.py); a mention that matches nothing is a named error;
- no question analysis, hence no topic order: entity paths are searched for every order of
  the topic entities and scored in one canonical orientation (order_free.py), so the ranking
  does not depend on the order the topics were given or found in; every length PoG could
  ever search is used (1 <= length <= |Topic| * D_max, the supplement condition), since
  there is no D_predict;
- the indicator of FuzzySelect is the question itself;
- when no path joins all topic entities, each topic entity's own paths (length <= D_max) are
  ranked instead, and the trace says so (`fallback`);
- the result has mode="llm-free", `answers` empty unless a trained ranker answers (its top
  path's end set, pog/ranker/answer.py) or the zero-shot ranking does (only when its top
  path starts from one topic entity: it cannot tell which entity on a join is asked for),
  `candidates` = entities of the top-ranked
  paths (the end sets for one topic entity; the non-topic entities on the path otherwise),
  ranked by path rank, then within a set by the number of chains through them, and a trace
  entry saying these are retrieval candidates.

API:
    await link_by_name(kg, question, *, threshold=0.85, max_ngram=6) -> list[TopicEntity]
    await explore_llm_free(kg, fuzzy, settings, topics, question) -> LLMFreeRun
    await run_llm_free(kg, fuzzy, settings, question, topic_entities=None, *,
                       top_k=None, max_candidates=50) -> PoGResult
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgreason.kg.base import UNNAMED, KnowledgeGraph, UnknownEntityError
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.evidence import shown_paths
from kgreason.pog.fuzzy import FuzzySelector, ScoredPath, prefilter_note
from kgreason.pog.graph import PreparedGraph, prepare_graph
from kgreason.pog.labels import (
    RANKER_NOTE,
    SIMILARITY_NOTE,
    mode_label,
)
from kgreason.pog.linking import DEFAULT_THRESHOLD, dedupe, link_spans, resolve_mention
from kgreason.pog.order_free import (
    collision_paths,
    mention_order,
    order_free_paths,
    ranked_sets,
)
from kgreason.pog.paths import PathSearch, find_entity_paths
from kgreason.pog.render import NameBook
from kgreason.pog.settings import PoGSettings
from kgreason.pog.topic import bracketed_topics
from kgreason.pog.types import AnswerEntity, PoGResult, ReasoningPath, TopicEntity


async def link_by_name(
    kg: KnowledgeGraph,
    question: str,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    max_ngram: int = 6,
) -> list[TopicEntity]:
    """`[bracketed]` mentions (each must link: UnknownMentionError names the one that does
    not), else the question's word spans (linking.link_spans)."""
    mentions = bracketed_topics(question)
    if mentions:
        return dedupe([await resolve_mention(kg, m, threshold=threshold) for m in mentions])
    return await link_spans(kg, question, threshold=threshold, max_ngram=max_ngram)


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
    revisit = settings.revisits(fuzzy.zero_shot)
    # self-loops stay in the graph when the search revisits (prepare_graph)
    prepared = await prepare_graph(kg, topics, settings, keep_self_loops=revisit)
    timings = dict(prepared.timings_s)
    t0 = time.perf_counter()
    reference = mention_order(await kg.names(list(prepared.topics)), question)
    search = order_free_paths(
        prepared.graph,
        list(prepared.topics),
        d_max=settings.d_max,
        max_paths=settings.max_paths,
        reference=reference,
        max_level_rows=settings.max_level_rows,
        revisit_when_empty=revisit,
    )
    fallback = ""
    if not search.paths and len(prepared.topics) > 1:
        # no path joins all topic entities (a wrong link, or a KG gap): rank each topic
        # entity's own paths instead, and say so
        fallback = "no entity path through all topic entities: paths from each topic entity"
        graph = prepared.clustered
        per_topic = [
            find_entity_paths(
                graph,
                [t],
                min_len=1,
                max_len=settings.d_max,
                max_paths=settings.max_paths,
                max_level_rows=settings.max_level_rows,
                revisit_when_empty=revisit,
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
    await book.ensure_shown(search.graph, search.paths)
    t2 = time.perf_counter()
    timings["names"] = t2 - t1
    # a trained ranker masks the [mention] itself; SBERT compares plain text
    indicator = question if fuzzy.learned else question.replace("[", "").replace("]", "")
    ranked = fuzzy.rank(indicator, search.paths, book.names, top=top_w or settings.w1)
    timings["fuzzy"] = time.perf_counter() - t2
    return LLMFreeRun(prepared, search, ranked, book, timings, fallback)


async def _topics(
    kg: KnowledgeGraph,
    settings: PoGSettings,
    question: str,
    given: Sequence[str | TopicEntity] | None,
) -> list[TopicEntity]:
    if not given:
        return await link_by_name(kg, question, threshold=settings.link_threshold)
    ids = [g for g in given if isinstance(g, str)]
    names = await kg.names(ids) if ids else {}
    unknown = [g for g in ids if g not in names]
    if unknown:
        raise UnknownEntityError(f"not in {kg.name}: {unknown}")
    return dedupe(
        [g if isinstance(g, TopicEntity) else TopicEntity(g, names[g], g, 1.0) for g in given]
    )


def rerank_by_length(ranked: Sequence[ScoredPath], penalty: float) -> list[ScoredPath]:
    """Order by fuzzy score minus `penalty` per hop beyond the first (stable on ties)."""
    if penalty == 0:
        return list(ranked)
    return sorted(ranked, key=lambda sp: -(sp.score - penalty * (sp.path.length - 1)))


def demote_collisions(ranked: Sequence[ScoredPath], graph: ClusteredGraph) -> list[ScoredPath]:
    """Paths through a merged node (order_free.collision_path) after all others, each group
    in its order: MetaQA's genre/film "War" otherwise puts its director in many answers."""
    bad = collision_paths(graph, [s.path for s in ranked])
    return [s for s, b in zip(ranked, bad, strict=True) if not b] + [
        s for s, b in zip(ranked, bad, strict=True) if b
    ]


def candidate_ids(
    paths: Sequence[ReasoningPath],
    topics: Sequence[str],
    graph: ClusteredGraph | None = None,
    *,
    limit: int | None = None,
) -> list[str]:
    """Entities of ranked paths, in rank order: end sets for a single topic entity, the
    non-topic entities along the path (in hop order) for entity paths. Within a set, members
    on more chains of the path come first when `graph` is given (else by id)."""
    skip = set(topics)
    out: dict[str, None] = {}
    for p in paths:
        if limit is not None and len(out) >= limit:
            break  # enough: later paths cannot change the first `limit`
        first = None if limit is None else limit + len(skip)  # (the topics may be among them)
        sets = (
            ranked_sets(graph, p, first) if graph is not None else [sorted(h.dst) for h in p.hops]
        )
        hop_idx = [len(p.hops) - 1] if len(set(p.entity_list)) <= 1 else range(len(p.hops))
        for j in hop_idx:
            for e in sets[j]:
                if e not in skip:
                    out.setdefault(e)
    return list(out)[:limit]


def bracket_mentions(question: str, mentions: Sequence[str]) -> str:
    """Mark each linked mention `[as MetaQA does]`, so rankers that mask the topic mention
    find it even when it was linked fuzzily ("Once Were Warrior" is no substring of the
    entity's name "Once Were Warriors")."""
    for m in sorted({m.strip() for m in mentions if m and m.strip()}, key=len, reverse=True):
        if f"[{m.lower()}]" in question.lower():
            continue
        at = question.lower().find(m.lower())
        if at >= 0 and "[" not in question[:at].rsplit("]", 1)[-1]:
            question = f"{question[:at]}[{question[at : at + len(m)]}]{question[at + len(m) :]}"
    return question


async def run_llm_free(
    kg: KnowledgeGraph,
    fuzzy: FuzzySelector,
    settings: PoGSettings,
    question: str,
    topic_entities: Sequence[str | TopicEntity] | None = None,
    *,
    top_k: int | None = None,
    max_candidates: int = 50,
) -> PoGResult:
    """`top_k` paths (default W_max) are returned as `paths`, materialized with triples.
    `topic_entities`: ids of the KG, or TopicEntity links made by the caller."""
    from kgreason.pog.ranker.factory import describe_ranker

    result = PoGResult(question=question, mode="llm-free")
    result.trace.append(
        {
            "stage": "llm-free",
            "label": mode_label(fuzzy.answers, fuzzy.zero_shot),
            "note": RANKER_NOTE if fuzzy.answers else SIMILARITY_NOTE,
            **describe_ranker(settings, kg, fuzzy),
        }
    )
    t_start = time.perf_counter()
    try:
        topics = await _topics(kg, settings, question, topic_entities)
    except UnknownEntityError as e:
        result.error_kind, result.error = "unknown-entity", str(e)
        return result
    result.topic_entities = topics
    if not topics:
        result.error_kind = "unknown-entity"
        result.error = f"no entity of {kg.name} is named in the question: mark it [in brackets] or pass --topic"
        return result
    ranked_question = bracket_mentions(question, [t.keyword for t in topics])
    t_topics = time.perf_counter() - t_start
    run = await explore_llm_free(kg, fuzzy, settings, [t.id for t in topics], ranked_question)
    result.subgraph = run.prepared.stats
    result.bounds_hit = [*run.prepared.bounds_hit, *run.search.bounds_hit()]
    pre = fuzzy.prefiltered(len(run.search.paths), settings.w1)
    if pre is not None:
        result.bounds_hit.append(prefilter_note(len(run.search.paths), pre, fuzzy.prefilter_by))
    result.timings_s = {"topics": t_topics, **run.timings_s}
    lap = _Laps(result.timings_s)
    result.trace.append(
        {
            "stage": "graph",
            "reduction": run.prepared.reduction.note,
            "paths": len(run.search.paths),
            "length": [run.search.min_len, run.search.max_len],
            # the pruning funnel's fuzzy step: paths kept by FuzzySelect (top W1)
            "fuzzy": len(run.ranked),
            **({"fuzzy_prefilter": pre} if pre is not None else {}),
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
    # with no predicted depth, shorter paths are preferred between near-equal scores, for
    # one topic entity and for paths joining several alike (a 6-hop join is no likelier);
    # a trained ranker (pog/ranker) already scores length, and it answers
    penalty = 0.0 if fuzzy.learned else settings.llm_free_length_penalty
    ranked = rerank_by_length(run.ranked, penalty)
    if all(t.name == t.id for t in topics):  # names are ids (MetaQA): merged-node trap
        ranked = demote_collisions(ranked, run.search.graph)
    lap("rank")
    ids = [t.id for t in topics]
    top = [s.path for s in ranked[: top_k or settings.w_max]]
    result.show(
        shown_paths(run.search.graph, top, settings.result_members, settings.result_triples)
    )
    lap("evidence")
    cands = candidate_ids([s.path for s in ranked], ids, run.search.graph, limit=max_candidates * 2)
    await run.book.ensure(cands[: max_candidates * 2])
    named = [c for c in cands if run.book.names.get(c) not in (None, UNNAMED)]
    result.candidates = [AnswerEntity(run.book.get(c), c) for c in named[:max_candidates]]
    lap("candidates")
    if fuzzy.answers:
        from kgreason.pog.ranker.align import path_scalars, unit
        from kgreason.pog.ranker.answer import apply_answer
        from kgreason.pog.ranker.features import path_keys

        threshold = settings.llm_free_abstain_below
        # the ranker's own embedder (its artefact's: the threshold was set with it), not the
        # pipeline's, which may be MiniLM or static depending on the install
        # (a PathRanker's cached unit vectors, which its own alignment features share)
        ranker = getattr(fuzzy, "ranker", None)
        emb = getattr(ranker, "embedder", None) or fuzzy.cache
        vectors = getattr(ranker, "unit_vectors", None) or (lambda t: unit(emb.embed(t)))
        mentions = [m for t in topics for m in (t.keyword, t.name) if m]
        # a zero-shot ranking's calibrated confidence reads the alignment too
        calibration = getattr(ranker, "calibration", None)
        scalars = (
            path_scalars(ranked_question, mentions, path_keys(ranked[0].path), vectors)
            if (threshold > 0 or calibration) and ranked
            else None
        )
        await apply_answer(
            result,
            ranked,
            run.book,
            [t.id for t in topics],
            scalars=scalars,
            abstain_below=threshold,
            # a learned ranker was trained on joins' answer sets; a zero-shot ranking
            # cannot tell which entity on a join is asked for (tests/pog/test_e2e_virtuoso)
            answer_joins=not fuzzy.zero_shot,
            calibration=calibration,
            confidence_below=settings.llm_free_confidence_below,
        )
        lap("answer")
    cited = [t for p in result.paths for t in p.triples()]
    if cited:
        ok = await kg.contains(cited)
        result.unverified_triples = [t for t, k in zip(cited, ok, strict=True) if not k]
    lap("verify")
    result.timings_s["total"] = time.perf_counter() - t_start
    return result


class _Laps:
    """Each step after the timed stages, timed from the end of the one before, so that
    `timings_s` adds up to its total (what the user waits for, less serialisation)."""

    def __init__(self, timings: dict[str, float]):
        self.timings, self.t = timings, time.perf_counter()

    def __call__(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = now - self.t
        self.t = now
