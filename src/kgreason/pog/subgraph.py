"""Question subgraph detection (PoG section 4.1): the D_max-hop neighbourhood of every topic
entity, fetched through `KnowledgeGraph.expand` so it works on any backend.

The size bound is `PoGSettings.max_subgraph_triples`; when the backend stops at it, the
returned `QuestionSubgraph` says so (`truncated`, `truncation_reason`) and `bounds_hit()`
names it, so the pipeline can put it in `PoGResult.bounds_hit`. Nothing is dropped silently.

API:
    await detect_subgraph(kg, topic_ids, settings, depth=None) -> QuestionSubgraph
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kgreason.kg.base import KnowledgeGraph, Triple
from kgreason.pog.settings import PoGSettings


class EmptySubgraphError(ValueError):
    """No topic entity has any edge in the KG (the question cannot be explored)."""


@dataclass
class QuestionSubgraph:
    topics: tuple[str, ...]
    triples: list[Triple]
    depth: int
    truncated: bool = False
    truncation_reason: str = ""
    #: topic ids the KG does not know (no name and no edge)
    unknown_topics: list[str] = field(default_factory=list)

    def entities(self) -> set[str]:
        out = set(self.topics)
        for t in self.triples:
            out.add(t.head)
            out.add(t.tail)
        return out

    def bounds_hit(self) -> list[str]:
        if not self.truncated:
            return []
        return [f"subgraph: {self.truncation_reason or 'truncated'} (depth {self.depth})"]


async def detect_subgraph(
    kg: KnowledgeGraph,
    topic_ids: Sequence[str],
    settings: PoGSettings,
    *,
    depth: int | None = None,
) -> QuestionSubgraph:
    """Fetch the `depth` (default `settings.d_max`) hop neighbourhood of all topic entities.

    One `expand` call over all seeds: the union of the per-entity neighbourhoods is the same
    set of nodes, and a shared bound keeps the total size under control.
    """
    topics = tuple(dict.fromkeys(topic_ids))
    d = settings.d_max if depth is None else depth
    known = await kg.names(list(topics))
    sub = await kg.expand(list(topics), d, max_triples=settings.max_subgraph_triples)
    touched = {x for t in sub.triples for x in (t.head, t.tail)}
    unknown = [t for t in topics if t not in known and t not in touched]
    return QuestionSubgraph(
        topics=topics,
        triples=list(sub.triples),
        depth=d,
        truncated=sub.truncated,
        truncation_reason=sub.truncation_reason,
        unknown_topics=unknown,
    )
