"""PoG, PoG-E, the LLM-free mode, ToG (ToG-R) and SymbolLKG behind the runner's `Method` interface.

Each question gets its own pipeline object around the per-question metered LLM the runner
passes in, while the expensive parts (KG handle, embedder, path-embedding cache, solver
sandbox) are built once per run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgreason.config import Settings
from kgreason.eval.methods import BASELINES, Method, Outcome
from kgreason.eval.methods import prompt_hashes as baseline_prompt_hashes
from kgreason.eval.records import Record
from kgreason.eval.trained import RankerUse
from kgreason.llm.base import ChatLLM
from kgreason.prompts import prompt_hashes

if TYPE_CHECKING:  # the pipelines import torch-sized dependencies: only when a method needs them
    from kgreason.embed.base import Embedder
    from kgreason.kg.base import KnowledgeGraph
    from kgreason.lkg.pipeline import SymbolLKG
    from kgreason.lkg.router import RouteDecision
    from kgreason.lkg.settings import LKGSettings
    from kgreason.lkg.solvers.sandbox import Sandbox
    from kgreason.pog.fuzzy import FuzzySelector
    from kgreason.pog.settings import PoGSettings
    from kgreason.pog.types import PoGResult
    from kgreason.tog.settings import ToGSettings


@dataclass
class BuiltMethod:
    method: Method
    kg_identity: dict[str, str] | None = None
    prompt_hashes: dict[str, str] = field(default_factory=dict)
    #: what ranks paths (PoG family); None: the method uses no path ranker
    ranker: RankerUse | None = None


def _hash_prompts(package: str) -> dict[str, str]:
    return {f"{package}/{name}": h for name, h in prompt_hashes(package).items()}


def _triples_of(result: PoGResult) -> list[list[list[str]]]:
    return [[[t.head, t.relation, t.tail] for t in p.triples()] for p in result.paths]


@dataclass
class PoGMethod:
    """PoG / PoG-E (with an LLM) or the LLM-free mode (without one)."""

    name: str
    kg: KnowledgeGraph
    embedder: Embedder
    settings: PoGSettings
    llm_free: bool = False
    #: built once per run and shared, so path-text embeddings are cached across questions
    fuzzy: FuzzySelector | None = None

    async def answer(self, record: Record, llm: ChatLLM | None) -> Outcome:
        from kgreason.pog.pipeline import PoG

        pog = PoG(
            self.kg, None if self.llm_free else llm, self.embedder, self.settings, fuzzy=self.fuzzy
        )
        self.fuzzy = pog.fuzzy  # share path-text embeddings across questions
        result = await pog.ask_async(record.question, record.topic_entities or None)
        names = await self.kg.names(sorted({x for p in result.paths for x in p.entities()}))
        if self.llm_free:
            # with a learned ranker the top path's answer set comes first (pog/ranker/answer.py)
            answers = [c.name for c in result.candidates]
            ids = [c.id for c in result.candidates]
            kind = "candidates"
        else:
            answers = [a.name for a in result.answers]
            ids = [a.id for a in result.answers]
            kind = "answer"
        return Outcome(
            answers=answers,
            answer_ids=ids,
            answer_kind=kind,
            output_text=result.raw_answer or " ".join(answers),
            phase=result.phase,
            error_kind=result.error_kind,
            error=result.error,
            paths=_triples_of(result),
            names=names,
            topics=[t.id for t in result.topic_entities],
            extra={
                "subgraph": {
                    "entities": result.subgraph.entities,
                    "reduced_entities": result.subgraph.reduced_entities,
                    "truncated": result.subgraph.truncated,
                },
                "bounds_hit": result.bounds_hit,
                "unverified_triples": [
                    [t.head, t.relation, t.tail] for t in result.unverified_triples
                ],
                **_ranker_answer(result, record),
            },
        )


def _ranker_answer(result: PoGResult, record: Record) -> dict[str, Any]:
    """LLM-free mode with a learned ranker: its answer set and the set F1 vs gold. An
    abstained question is scored on the set it would have answered (the first candidates),
    so abstention changes no accuracy figure; `abstained` says it happened."""
    answers = result.answers
    if result.abstained:
        answers = result.candidates[: result.trace_record("ranker").get("answer_set_size", 0)]
    if not answers or result.mode != "llm-free":
        return {}
    from kgreason.eval.metrics import normalize_answer
    from kgreason.pog.ranker.supervision import set_f1

    gold = {normalize_answer(f) for a in record.answers for f in a.surface_forms()}
    got = frozenset(normalize_answer(a.name) for a in answers)
    f1, _ = set_f1(got, gold) if gold else (0.0, False)
    return {
        "answer_set": [a.name for a in answers],
        "answer_set_f1": round(f1, 4),
        "abstained": result.abstained,
    }


@dataclass
class SymbolLKGMethod:
    """SymbolLKG on a logic set (solver verdict) or on multi-hop QA (free-text answer from
    the question's titled passages, with the retrieved titles for Recall@k)."""

    name: str
    embedder: Embedder
    settings: LKGSettings
    #: one solver sandbox for the whole run
    sandbox: Sandbox | None = None

    async def answer(self, record: Record, llm: ChatLLM | None) -> Outcome:
        from kgreason.lkg.pipeline import NEEDS_LLM, SymbolLKG

        if llm is None:  # the graph is an LLM extraction: there is no LLM-free SymbolLKG
            return Outcome(error_kind="no_llm", error=NEEDS_LLM)
        solver = SymbolLKG(llm, self.embedder, self.settings, sandbox=self.sandbox)
        self.sandbox = self.sandbox or solver.executor.sandbox
        if record.task == "multihop":
            return await self._multihop(solver, record)
        r = await solver.asolve(record.context or "", record.question, record.options, id=record.id)
        return Outcome(
            answers=[r.verdict] if r.verdict else [],
            output_text=r.verdict or "",
            phase=r.route.route if r.route is not None else None,
            error_kind=None
            if r.status == "solved"
            else (r.status if r.status == "error" else "unsolved"),
            error=r.error,
            extra={
                "attempts": len(r.attempts),
                "program": r.program,
                **route_fields(r.route),
                # Logic-LM's backup (lkg.backup_answer): the scores report both settings
                "backup": r.backup,
                "backup_answer": r.backup_answer,
            },
        )

    async def _multihop(self, solver: SymbolLKG, record: Record) -> Outcome:
        passages = [(p.title, p.text) for p in record.passages]
        r = await solver.aanswer(passages, record.question, id=record.id)
        return Outcome(
            answers=[r.answer] if r.answer else [],
            output_text=r.raw_answer or (r.answer or ""),
            phase=r.route.route if r.route is not None else "answer",
            error_kind=None if r.status == "answered" else (r.error_kind or "error"),
            error=r.error,
            retrieved=r.titles,
            extra={
                "retrieved_titles": r.titles[:10],
                "premises": [p.model_dump() for p in r.premises[:10]],
                "lkg_counts": r.lkg_counts,
                "lkg_rejected": len(r.lkg_rejected),
                "solver_answer": r.solver_answer,
                **route_fields(r.route),
            },
        )


def route_fields(decision: RouteDecision | None) -> dict[str, Any]:
    """The router's own choice beside the final route (after fallbacks and the
    statement-options override), so router accuracy (paper Table 5) can be computed."""
    if decision is None:
        return {}
    return {
        "route": decision.route,
        "route_llm": decision.llm_choice,
        "route_structural": decision.structural,
        "route_source": decision.source,
    }


@dataclass
class ToGMethod:
    """Think-on-Graph (`tog`) or ToG-R (`tog-r`), PoG's baseline, on the run's KG."""

    name: str
    kg: KnowledgeGraph
    settings: ToGSettings

    async def answer(self, record: Record, llm: ChatLLM | None) -> Outcome:
        from kgreason.tog.pipeline import ToG

        if llm is None:
            return Outcome(error_kind="no_llm", error=f"method '{self.name}' needs an LLM")
        r = await ToG(self.kg, llm, self.settings).ask_async(
            record.question, record.topic_entities or None
        )
        on_paths = {x for p in r.paths for t in p for x in (t.head, t.tail)}
        on_paths |= {t.id for t in r.topic_entities}
        return Outcome(
            answers=r.answers,
            answer_ids=r.answer_ids,
            output_text=r.raw_answer or " ".join(r.answers),
            phase=r.answer_source,
            error_kind=r.error_kind,
            error=r.error,
            paths=[[[t.head, t.relation, t.tail] for t in p] for p in r.paths],
            names={k: v for k, v in sorted(r.names.items()) if k in on_paths},
            topics=[t.id for t in r.topic_entities],
            extra={
                "variant": r.variant,
                "depth": r.depth,
                "explored": [
                    {"depth": d.depth, "relations": d.relations, "candidates": d.candidates,
                     "sufficient": d.sufficient}
                    for d in r.explored
                ],
                "recovered": r.recovered,
                "bounds_hit": r.bounds_hit,
            },
        )  # fmt: skip


def build_method(name: str, settings: Settings, *, dataset: str) -> BuiltMethod:
    if name in BASELINES:
        # bare file names, as runs recorded them before per-method hashes
        return BuiltMethod(BASELINES[name](), prompt_hashes=baseline_prompt_hashes())
    from kgreason.embed import build_embedder

    if name in ("pog", "pog-e", "llm-free"):
        from kgreason.kg.open import open_kg

        kg = open_kg(settings.kg)
        pog_settings = settings.pog.model_copy(
            update={"variant": "pog-e" if name == "pog-e" else "pog"}
        )
        from kgreason.eval.trained import ranker_use
        from kgreason.pog.ranker.factory import build_selector

        embedder = build_embedder(settings.embed)
        # a path ranker (pog.ranker / --ranker) replaces FuzzySelect's SBERT when configured
        fuzzy, warnings = build_selector(pog_settings, kg, embedder, llm_free=name == "llm-free")
        for w in warnings:
            logging.getLogger(__name__).warning(w)
        method = PoGMethod(
            name, kg, embedder, pog_settings, llm_free=name == "llm-free", fuzzy=fuzzy
        )
        return BuiltMethod(
            method,
            kg_identity={"name": kg.name, "fingerprint": kg.fingerprint()},
            # llm-free sends no prompt: none of them can change its results
            prompt_hashes={} if name == "llm-free" else _hash_prompts("kgreason.pog"),
            ranker=ranker_use(fuzzy),
        )
    if name in ("tog", "tog-r"):
        from kgreason.kg.open import open_kg

        kg = open_kg(settings.kg)
        # the method's name picks the variant; `tog.*` settings (kgreason.toml, KGREASON_TOG__*)
        # give the rest
        tog_settings = settings.tog.model_copy(update={"variant": name})
        return BuiltMethod(
            ToGMethod(name, kg, tog_settings),
            kg_identity={"name": kg.name, "fingerprint": kg.fingerprint()},
            prompt_hashes=_hash_prompts("kgreason.tog"),
        )
    if name == "symbollkg":
        return BuiltMethod(
            SymbolLKGMethod(name, build_embedder(settings.embed), settings.lkg),
            prompt_hashes=_hash_prompts("kgreason.lkg"),
        )
    raise ValueError(f"unknown method '{name}'")
