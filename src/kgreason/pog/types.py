"""Typed data passed between PoG's stages.

Paths run over clustered edges (supernodes): one hop joins a set of entities to the set of
entities reached through one relation in one direction, `{e1,...} -> r -> {e2,...}` as the
paper renders it, and remembers the concrete KG triples it stands for so that every cited
triple can be traced and checked against the KG.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from kgreason.kg.base import Triple
from kgreason.result import ResultBase

if TYPE_CHECKING:
    from kgreason.pog.evidence import Shown

Phase = Literal["topic-entity-path", "llm-supplement", "node-expand", "final-llm-knowledge"]
Mode = Literal["pog", "pog-e", "llm-free"]


@dataclass(frozen=True)
class Hop:
    """One clustered step of a path. `forward` is True when src -relation-> dst holds in the
    KG (src is the head), False when dst -relation-> src holds."""

    src: tuple[str, ...]
    relation: str
    dst: tuple[str, ...]
    forward: bool
    #: the concrete KG triples behind this hop (head, relation, tail as stored in the KG)
    triples: tuple[Triple, ...] = ()
    #: relation clustering: other (relation, forward) pairs joining the same two sets, e.g.
    #: Freebase's inverse `contains` beside `containedby`; their triples are in `triples` too
    alt_relations: tuple[tuple[str, bool], ...] = ()
    #: a result's hop shows at most a bounded number of members and triples (pog/evidence.py):
    #: these are the full sizes, None when the tuple above is whole
    src_total: int | None = None
    dst_total: int | None = None
    triples_total: int | None = None

    def sizes(self) -> tuple[int, int, int]:
        """(src, dst, triples) sizes in full, whatever a result shows of them."""
        return (
            len(self.src) if self.src_total is None else self.src_total,
            len(self.dst) if self.dst_total is None else self.dst_total,
            len(self.triples) if self.triples_total is None else self.triples_total,
        )

    def relation_keys(self) -> tuple[tuple[str, bool], ...]:
        """(relation, forward) of this hop, the primary one first."""
        return ((self.relation, self.forward), *self.alt_relations)

    # How stages read a hop's sets. A faster form's hop (kgreason.pog.arrays.hops) keeps
    # its sets as ids and overrides these, so that reading a set's size, or the first few
    # members a rendering shows, decodes no more names than that.

    def side(self, dst: bool) -> Sequence[str]:
        """The set at one end (dst, else src): its identity names the set while it lives,
        and its len() is the set's size."""
        return self.dst if dst else self.src

    def view(self, dst: bool, k: int | None) -> tuple[Sequence[str], int]:
        """(the first k members of that set, all when k is None; the set's size, in full
        for a result's bounded hop)."""
        ids = self.dst if dst else self.src
        total = self.dst_total if dst else self.src_total
        return ids[:k], len(ids) if total is None else total

    def reversed(self) -> Hop:
        """The same hop read backwards: sets swapped, every relation's direction flipped."""
        alts = tuple((r, not f) for r, f in self.alt_relations)
        return Hop(self.dst, self.relation, self.src, not self.forward, self.triples, alts)

    @classmethod
    def prefetch(cls, sides: Sequence[tuple[Hop, bool]], k: int | None) -> None:
        """Make the first k members of these sets (hop, dst) cheap to read next; plain hops
        hold their names already."""

    @classmethod
    def count_answers(
        cls, hops: Sequence[Hop], topics: Sequence[str], end_only: bool
    ) -> int | None:
        """The size of a path's answer set (its end set, or every dst set unless
        `end_only`, less the topics) when a form can count it without reading names;
        None: read the names."""
        return None


@dataclass(frozen=True, slots=True)  # slots: a search makes up to 20,000 at once
class ReasoningPath:
    hops: tuple[Hop, ...]
    #: the ordered entities this path connects (topic entities, or topic + predicted entity)
    entity_list: tuple[str, ...] = ()

    @property
    def length(self) -> int:
        return len(self.hops)

    def triples(self) -> list[Triple]:
        return [t for h in self.hops for t in h.triples]

    def entities(self) -> set[str]:
        out: set[str] = set()
        for h in self.hops:
            out.update(h.src)
            out.update(h.dst)
        return out

    def end_entities(self) -> tuple[str, ...]:
        return self.hops[-1].dst if self.hops else ()


@dataclass(frozen=True)
class TopicEntity:
    id: str
    name: str
    #: the question keyword it was linked from ("" when the dataset supplied it)
    keyword: str = ""
    score: float = 1.0
    #: how it was linked: "given" (an id or {id: name} the caller supplied), "exact" (the
    #: name, up to case/spacing/underscores/punctuation/diacritics) or "fuzzy" (closest name,
    #: similarity `score` >= pog.link_threshold)
    method: str = "given"


@dataclass
class QuestionAnalysis:
    """Output of the single question-analysis LLM call (section 4.1)."""

    split_questions: list[str]
    indicator: str
    #: topic entity ids in the order the indicator mentions them
    ordered_topics: list[str]
    predicted_depth: int
    raw: str = ""


@dataclass
class SubgraphStats:
    """Sizes before and after graph pruning (the paper's Table 3 figure)."""

    triples: int = 0
    entities: int = 0
    reduced_triples: int = 0
    reduced_entities: int = 0
    clustered_edges: int = 0
    truncated: bool = False
    truncation_reason: str = ""


@dataclass
class AnswerEntity:
    name: str
    id: str | None = None


@dataclass
class PoGResult(ResultBase):
    """One question's outcome. `ok`/`error_kind`/`trace`/`usage`/`timings_s` and
    `to_dict()` are shared with SolveResult (kgreason.result)."""

    question: str
    mode: Mode
    answers: list[AnswerEntity] = field(default_factory=list)
    #: which exploration phase produced the answer (None in LLM-free mode or on error)
    phase: Phase | None = None
    paths: list[ReasoningPath] = field(default_factory=list)
    topic_entities: list[TopicEntity] = field(default_factory=list)
    analysis: QuestionAnalysis | None = None
    subgraph: SubgraphStats = field(default_factory=SubgraphStats)
    #: bounds hit along the way (path enumeration, subgraph size...), each named
    bounds_hit: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    timings_s: dict[str, float] = field(default_factory=dict)
    #: triples of the cited paths that the KG does not contain (empty = faithful)
    unverified_triples: list[Triple] = field(default_factory=list)
    #: None when the question completed; otherwise a named reason (kind, message)
    error_kind: str | None = None
    error: str | None = None
    #: LLM-free mode only: ranked candidate end entities, never presented as PoG's answer
    candidates: list[AnswerEntity] = field(default_factory=list)
    #: LLM-free mode with a ranker: no answer was confident enough (`answers` is empty and
    #: the top path's answers lead `candidates`; pog.llm_free_abstain_below)
    abstained: bool = False
    raw_answer: str = ""
    trace: list[dict[str, Any]] = field(default_factory=list)

    def trace_record(self, stage: str) -> dict[str, Any]:
        """The first trace record of `stage` ("llm-free", "ranker", "graph", ...), or {}."""
        return next((t for t in self.trace if t.get("stage") == stage), {})

    @property
    def label(self) -> str | None:
        """What an LLM-free result is labelled (kgreason.pog.labels); None for PoG's."""
        from kgreason.pog.labels import result_label

        return result_label(self)

    def show(self, shown: Shown) -> None:
        """Take the bounded paths a result shows, and keep their sets in full beside them
        (not a field: `to_dict()` never serialises them)."""
        self.paths = list(shown.paths)
        self.__dict__["_member_sets"] = shown.sets

    def member_sets(self) -> list[list[Sequence[str]]]:
        """Every set of every path in full, in the order shown: `[p][j]` is path p's set at
        position j (0: its first hop's src; j + 1: hop j's dst). Empty when not kept."""
        got: list[list[Sequence[str]]] = self.__dict__.get("_member_sets", [])
        return got
