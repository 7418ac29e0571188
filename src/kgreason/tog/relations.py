"""Relation exploration (ToG section 2.1.2): the relations leaving each path's end entity,
and their pruning by the LLM to the N most promising, each with a score.

The KG interface has no "relations of an entity" call, so the relations are read off the
entity's neighbours (one batched `neighbors` call per round, cached for the question); the
same neighbours then give the entities behind each kept relation. A relation whose every
entity is already on the path is not offered (walking back the way the path came, which
ToG's code prevents by excluding the previous relation).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgreason.kg.base import InvalidIdentifierError, KnowledgeGraph, Neighbor, is_noise_relation
from kgreason.kg.settings import NOISE_FILTERS
from kgreason.llm.base import ChatLLM
from kgreason.tog.calls import call_stage
from kgreason.tog.parsing import parse_scores
from kgreason.tog.settings import ToGSettings
from kgreason.tog.types import BeamPath, ScoredRelation

REMINDER = 'Reply with one JSON object such as {"relation.name": 0.6, "other.relation": 0.4}.'


@dataclass
class Neighbourhood:
    """Neighbours read so far in one question, and the bounds they hit."""

    kg: KnowledgeGraph
    settings: ToGSettings
    seen: dict[str, list[Neighbor]] = field(default_factory=dict)
    bounds_hit: list[str] = field(default_factory=list)

    async def fetch(self, ids: Sequence[str]) -> None:
        todo = [i for i in dict.fromkeys(ids) if i not in self.seen]
        if not todo:
            return
        cap = self.settings.max_neighbors
        try:
            found = await self.kg.neighbors(todo, limit_per_entity=cap)
        except InvalidIdentifierError:
            # a value the endpoint cannot take as an id (a literal reached as a neighbour) is
            # a dead end, not the end of the question: ask for the others one by one
            found = {}
            for i in todo:
                with contextlib.suppress(InvalidIdentifierError):
                    found.update(await self.kg.neighbors([i], limit_per_entity=cap))
        noise = NOISE_FILTERS[self.settings.noise_filter]
        for i in todo:
            got = list(found.get(i, []))
            if len(got) >= cap:  # the KG's rows, before ToG's own filter
                self.bounds_hit.append(f"neighbours of {i} cut at tog.max_neighbors={cap}")
            self.seen[i] = (
                [n for n in got if not is_noise_relation(n.relation, noise)] if noise else got
            )

    async def names(self, ids: Sequence[str]) -> dict[str, str]:
        """D(.) of the ids the backend accepts (literals keep their own text)."""
        try:
            return await self.kg.names(list(ids))
        except InvalidIdentifierError:
            out: dict[str, str] = {}
            for i in ids:
                with contextlib.suppress(InvalidIdentifierError):
                    out.update(await self.kg.names([i]))
            return out

    def of(self, entity: str) -> list[Neighbor]:
        return self.seen.get(entity, [])


def relation_candidates(
    path: BeamPath, neighbors: Sequence[Neighbor]
) -> dict[str, tuple[str, ...]]:
    """relation -> the directions it leaves `path.end` in, for relations leading somewhere
    new; sorted by name so the prompt is the same on every run."""
    on_path = path.entities()
    dirs: dict[str, set[str]] = {}
    for n in neighbors:
        if n.entity not in on_path:
            dirs.setdefault(n.relation, set()).add(n.direction)
    return {r: tuple(sorted(dirs[r], reverse=True)) for r in sorted(dirs)}


async def prune_relations(
    llm: ChatLLM,
    question: str,
    entity_name: str,
    candidates: dict[str, tuple[str, ...]],
    settings: ToGSettings,
) -> list[ScoredRelation]:
    """The LLM keeps at most N relations with scores (stage `tog.relation_prune`). A single
    candidate is kept with score 1 without a call (ToG does the same for one candidate
    entity). Relations the reply names but the entity does not have are ignored."""
    names = list(candidates)
    if not names:
        return []
    if len(names) == 1:
        return [ScoredRelation(names[0], 1.0, candidates[names[0]])]
    scores, _ = await call_stage(
        llm,
        "relation_prune",
        settings,
        lambda text: parse_scores(text, names),
        REMINDER,
        question=question,
        entity=entity_name,
        relations="\n".join(names),
        width=str(settings.width),
    )
    order = {r: i for i, r in enumerate(names)}
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
    return [ScoredRelation(r, s, candidates[r]) for r, s in ranked[: settings.width] if s > 0]
