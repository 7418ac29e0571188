"""Think-on-Graph (Sun et al., ICLR 2024), PoG's main baseline (PoG Tables 2, 7, 8).

    topics = link_topics(...)                          # initialisation
    for depth in 1..Dmax:                              # exploration, beam width N
        relations = prune_relations(...) per path end  #   relation search + prune
        scored    = score_entities(...) per relation   #   entity search + prune
        beam      = keep_best(all extensions, N)
        if is_sufficient(facts(beam)): answer_from_facts(...)   # reasoning
    else: answer_from_knowledge(...)                   # depth exhausted: own knowledge

Every LLM call names its stage (`tog.relation_prune`, `tog.entity_score`, `tog.reasoning`,
`tog.answer`, `tog.own_knowledge`); usage is accounted per stage in the result, as PoG's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from kgreason.aio import run_sync
from kgreason.kg.base import KGError, KnowledgeGraph, Neighbor, UnknownEntityError
from kgreason.kg.ranking import normalize_name
from kgreason.llm.base import ChatLLM, LLMOutputError
from kgreason.llm.usage import Budget, MeteredLLM, UsageLedger
from kgreason.pog.answering import rejoin_names
from kgreason.pog.topic import TopicInput
from kgreason.result import llm_error_kind
from kgreason.tog.answer import answer_from_facts, answer_from_knowledge
from kgreason.tog.entities import entity_candidates, keep_best, score_entities
from kgreason.tog.reasoning import is_sufficient
from kgreason.tog.relations import Neighbourhood, prune_relations, relation_candidates
from kgreason.tog.render import facts
from kgreason.tog.settings import ToGSettings
from kgreason.tog.topics import link_topics
from kgreason.tog.types import AnswerSource, BeamPath, DepthRecord, ScoredRelation, ToGResult
from kgreason.tracing import Callback, Tracer


def error_kind(e: Exception) -> str | None:
    """The named reason a question ended (PoG's names), or None for a bug."""
    if isinstance(e, UnknownEntityError):
        return "unknown-entity"
    if isinstance(e, KGError):
        return "kg-error"
    return llm_error_kind(e)


class ToG:
    """`ToG(kg, llm, settings).ask(question, topic_entities)`. The KG is read through the
    common interface (kg/base.py), so ToG runs on the bundled store, a SPARQL endpoint or a
    MemoryKG alike."""

    def __init__(
        self,
        kg: KnowledgeGraph,
        llm: ChatLLM,
        settings: ToGSettings | None = None,
        *,
        budget: Budget | None = None,
        callbacks: Sequence[Callback] = (),
    ):
        self.kg = kg
        self.llm = llm
        self.settings = settings or ToGSettings()
        self.budget = budget
        self.callbacks = list(callbacks)

    def ask(self, question: str, topic_entities: TopicInput | None = None) -> ToGResult:
        return run_sync(self.ask_async(question, topic_entities))

    async def ask_async(self, question: str, topic_entities: TopicInput | None = None) -> ToGResult:
        s = self.settings
        ledger = UsageLedger()
        llm = MeteredLLM(self.llm, ledger, self.budget)
        result = ToGResult(question=question, variant=s.variant)
        tr = Tracer("tog", self.callbacks, ledger=ledger)
        hood = Neighbourhood(self.kg, s)
        t0 = time.perf_counter()
        try:
            with tr.stage("topic_entity") as st:
                topics = await link_topics(self.kg, question, topic_entities, s.link_threshold)
                st.note(topics=[t.id for t in topics])
            result.topic_entities = topics
            result.names.update({t.id: t.name for t in topics})
            beam = [BeamPath(t.id, t.id) for t in topics]
            for depth in range(1, s.depth + 1):
                with tr.stage("exploration", depth=depth) as st:
                    record = DepthRecord(depth)
                    new = await self._explore(llm, question, beam, hood, record, result)
                    st.size(candidates=record.candidates, kept=len(new))
                if not new:  # nothing new to walk to: ToG's "half stop"
                    break
                beam = new
                result.depth = depth
                result.explored.append(record)
                record.kept = [[[t.head, t.relation, t.tail] for t in p.triples] for p in beam]
                result.paths = [list(p.triples) for p in beam]
                with tr.stage("reasoning", depth=depth):
                    shown = facts(beam, result.names, s.variant)
                    record.sufficient = await is_sufficient(
                        llm, question, shown, s, result.recovered
                    )
                if record.sufficient:
                    with tr.stage("answer"):
                        answers, raw = await answer_from_facts(llm, question, shown, s)
                    self._set_answer(result, answers, raw, "paths", beam)
                    return result
            with tr.stage("answer"):
                if result.paths and result.depth < s.depth:
                    shown = facts(beam, result.names, s.variant)
                    answers, raw = await answer_from_facts(llm, question, shown, s)
                    self._set_answer(result, answers, raw, "half-stop", beam)
                else:
                    answers, raw = await answer_from_knowledge(llm, question, s)
                    self._set_answer(result, answers, raw, "llm-knowledge", [])
        except Exception as e:
            kind = error_kind(e)
            if kind is None:
                raise
            result.error_kind, result.error = kind, str(e)
        finally:
            result.bounds_hit = hood.bounds_hit
            result.trace = tr.trace
            result.timings_s = dict(tr.timings_s)
            result.timings_s["total"] = time.perf_counter() - t0
            result.usage = ledger.to_dict()
        return result

    aask = ask_async

    async def _explore(
        self,
        llm: ChatLLM,
        question: str,
        beam: list[BeamPath],
        hood: Neighbourhood,
        record: DepthRecord,
        result: ToGResult,
    ) -> list[BeamPath]:
        """One round: relations of each path end, entities of each kept relation, the cut."""
        s = self.settings
        await hood.fetch([p.end for p in beam])
        await self._learn_names(hood, result, [p.end for p in beam])
        extensions: list[BeamPath] = []
        for path in beam:
            neighbors = hood.of(path.end)
            name = result.names.get(path.end, path.end)
            kept = await self._prune(llm, question, name, path, neighbors, result)
            record.relations.append(
                {"entity": path.end, "kept": [[r.relation, round(r.score, 4)] for r in kept]}
            )
            for rel in kept:
                cands = entity_candidates(path, rel, neighbors)
                await self._learn_names(hood, result, list(cands))
                scored = await score_entities(
                    llm, question, path, name, rel, list(cands), result.names, s,
                    result.recovered,
                )  # fmt: skip
                record.candidates += len(scored)
                extensions += [path.extend(cands[e], rel.relation, e, sc) for e, sc in scored]
        return keep_best(extensions, s.width)

    async def _prune(
        self,
        llm: ChatLLM,
        question: str,
        name: str,
        path: BeamPath,
        neighbors: list[Neighbor],
        result: ToGResult,
    ) -> list[ScoredRelation]:
        try:
            return await prune_relations(
                llm, question, name, relation_candidates(path, neighbors), self.settings
            )
        except LLMOutputError as e:  # ToG's code drops the entity's relations on a bad reply
            result.recovered.append(
                {"stage": "tog.relation_prune", "recovery": f"no relation from {name}",
                 "error": str(e)}
            )  # fmt: skip
            return []

    @staticmethod
    async def _learn_names(hood: Neighbourhood, result: ToGResult, ids: Sequence[str]) -> None:
        missing = [i for i in ids if i not in result.names]
        if missing:
            result.names.update(await hood.names(missing))

    @staticmethod
    def _set_answer(
        result: ToGResult,
        answers: list[str],
        raw: str,
        source: AnswerSource,
        beam: list[BeamPath],
    ) -> None:
        on_paths: dict[str, str] = {}
        for p in beam:
            for e in sorted(p.entities()):
                on_paths.setdefault(normalize_name(result.names.get(e, e)), e)
        # an unquoted `{Washington, D.C.}` split at its comma is one name again
        answers = rejoin_names(answers, lambda n: normalize_name(n) in on_paths)
        result.answers = answers
        result.answer_ids = [on_paths.get(normalize_name(a)) for a in answers]
        result.raw_answer = raw
        result.answer_source = source
