"""Entity exploration (ToG section 2.1.2): the entities behind each kept relation, scored
by the LLM (stage `tog.entity_score`), and the global cut to the N best extended paths.

As in ToG: a relation reaching `sample_threshold` (20) or more entities is cut to a random
`entities_retained` (5) first; unnamed entities (Freebase CVTs) are dropped when named ones
exist, and share the relation's score equally when all are unnamed; a single candidate takes
the relation's score without a call; an entity's final score is its LLM score times its
relation's score. An unreadable scoring reply, after one re-ask, gives every candidate an
equal share, as ToG's code does ("all entities are created equal"), and is recorded.

ToG-R samples up to N entities per relation at random instead of asking the LLM.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

from kgreason.kg.base import UNNAMED, Neighbor, Triple
from kgreason.llm.base import ChatLLM, LLMOutputError
from kgreason.tog.calls import call_stage
from kgreason.tog.parsing import parse_scores
from kgreason.tog.settings import ToGSettings
from kgreason.tog.types import BeamPath, ScoredRelation

REMINDER = 'Reply with one JSON object such as {"Candidate A": 0.7, "Candidate B": 0.3}.'


def entity_candidates(
    path: BeamPath, relation: ScoredRelation, neighbors: Sequence[Neighbor]
) -> dict[str, Triple]:
    """entity -> the KG triple joining it to `path.end` through `relation`."""
    on_path = path.entities()
    out: dict[str, Triple] = {}
    for n in neighbors:
        same = n.relation == relation.relation and n.direction in relation.directions
        if same and n.entity not in on_path and n.entity not in out:
            out[n.entity] = n.triple(path.end)
    return out


def _rng(settings: ToGSettings, *parts: str) -> random.Random:
    """A generator seeded by the settings' seed and the parts, stable across processes."""
    key = "\x1f".join(parts).encode("utf-8")
    return random.Random(settings.seed * 1_000_003 + zlib.crc32(key))


def sample(ids: list[str], k: int, rng: random.Random) -> list[str]:
    return ids if len(ids) <= k else sorted(rng.sample(ids, k), key=ids.index)


async def score_entities(
    llm: ChatLLM,
    question: str,
    path: BeamPath,
    entity_name: str,
    relation: ScoredRelation,
    candidates: list[str],
    names: dict[str, str],
    settings: ToGSettings,
    recovered: list[dict[str, str]],
) -> list[tuple[str, float]]:
    """(entity, score) for the candidates of one relation."""
    rng = _rng(settings, question, path.end, relation.relation)
    if settings.variant == "tog-r":
        return [(c, relation.score) for c in sample(candidates, settings.width, rng)]
    if len(candidates) >= settings.sample_threshold:
        candidates = sample(candidates, settings.entities_retained, rng)
    named = [c for c in candidates if names.get(c, UNNAMED) != UNNAMED]
    if not named:
        share = relation.score / len(candidates) if candidates else 0.0
        return [(c, share) for c in candidates]
    if len(named) == 1:
        return [(named[0], relation.score)]
    labels = sorted({names[c] for c in named})
    try:
        scores, _ = await call_stage(
            llm,
            "entity_score",
            settings,
            lambda text: parse_scores(text, labels),
            REMINDER,
            question=question,
            entity=entity_name,
            relation=relation.relation,
            candidates="\n".join(labels),
        )
    except LLMOutputError as e:
        recovered.append({"stage": "tog.entity_score", "recovery": "equal scores", "error": str(e)})
        scores = {label: 1.0 / len(labels) for label in labels}
    return [(c, scores.get(names[c], 0.0) * relation.score) for c in named]


def keep_best(extensions: list[BeamPath], width: int) -> list[BeamPath]:
    """The N highest-scoring extended paths (ties keep exploration order); zero scores go."""
    ranked = sorted(enumerate(extensions), key=lambda ie: (-ie[1].score, ie[0]))
    return [p for _, p in ranked if p.score > 0][:width]
