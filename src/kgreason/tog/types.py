"""Typed data passed between ToG's stages, and the per-question result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from kgreason.kg.base import Triple
from kgreason.pog.types import TopicEntity
from kgreason.result import ResultBase

#: where the answer came from: "paths" (the reasoning check found the explored paths
#: sufficient), "half-stop" (exploration ran out of candidates before that; the answer is
#: generated from the paths found so far, as ToG's code does) or "llm-knowledge" (depth
#: exhausted, or nothing to explore: the LLM answers from its own knowledge, as the paper does)
AnswerSource = Literal["paths", "half-stop", "llm-knowledge"]
Variant = Literal["tog", "tog-r"]


@dataclass(frozen=True)
class ScoredRelation:
    """A relation kept by relation pruning, with its score and the directions it leaves the
    entity in ("tail": entity -r-> x, "head": x -r-> entity)."""

    relation: str
    score: float
    directions: tuple[str, ...] = ("tail",)


@dataclass(frozen=True)
class BeamPath:
    """One of the N reasoning paths: the triples walked from a topic entity (in the KG's
    own orientation) and the entity it has reached."""

    topic: str
    end: str
    triples: tuple[Triple, ...] = ()
    #: the relation chain walked (ToG-R shows these instead of triples)
    relations: tuple[str, ...] = ()
    score: float = 1.0

    def entities(self) -> set[str]:
        out = {self.topic, self.end}
        for t in self.triples:
            out.update((t.head, t.tail))
        return out

    def extend(self, triple: Triple, relation: str, entity: str, score: float) -> BeamPath:
        return BeamPath(
            self.topic, entity, (*self.triples, triple), (*self.relations, relation), score
        )


@dataclass
class DepthRecord:
    """What one exploration round did (the result's `explored`)."""

    depth: int
    relations: list[dict[str, Any]] = field(default_factory=list)
    candidates: int = 0
    kept: list[list[list[str]]] = field(default_factory=list)
    sufficient: bool | None = None


@dataclass
class ToGResult(ResultBase):
    """One question's outcome; `to_dict()`, `ok`, `usage`, `trace` as PoGResult's."""

    question: str
    variant: Variant = "tog"
    answers: list[str] = field(default_factory=list)
    #: the KG id of each answer when it names an entity on the explored paths
    answer_ids: list[str | None] = field(default_factory=list)
    answer_source: AnswerSource | None = None
    raw_answer: str = ""
    topic_entities: list[TopicEntity] = field(default_factory=list)
    #: the final N reasoning paths, as triples (head, relation, tail ids)
    paths: list[list[Triple]] = field(default_factory=list)
    #: each exploration round: relations kept per entity, candidates scored, paths kept
    explored: list[DepthRecord] = field(default_factory=list)
    #: depth reached (0 when nothing was explored)
    depth: int = 0
    #: replies that could not be read even after a re-ask and were recovered from as ToG
    #: does (an entity's relations dropped; equal entity scores; "not sufficient")
    recovered: list[dict[str, str]] = field(default_factory=list)
    bounds_hit: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    timings_s: dict[str, float] = field(default_factory=dict)
    error_kind: str | None = None
    error: str | None = None
    trace: list[dict[str, Any]] = field(default_factory=list)
