"""LLM supplement (section 4.2, phase 2): the model predicts likely answer entities with a new
indicator for each, from the paths seen so far and its own knowledge; each prediction is then
aligned to an entity of the question subgraph by text similarity, so that phase 2 searches
paths to real KG entities only.

Alignment: an exact (case/diacritic-insensitive) name match wins; otherwise the subgraph entity
whose name embedding is most similar to the predicted name, if its cosine is at least
ALIGN_MIN. Predictions that match nothing, or match a topic entity, are dropped and recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kgreason.embed.base import Embedder, cosine_topk
from kgreason.kg.base import UNNAMED
from kgreason.kg.ranking import normalize_name
from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError, extract_json
from kgreason.llm.schema import load_stage_schema
from kgreason.pog.llm_common import QuestionContext, call_stage, paths_field
from kgreason.pog.settings import PoGSettings

ALIGN_MIN = 0.75
MAX_PREDICTIONS = 3

REMINDER = 'Reply with a JSON list only: [{"predicted": "entity name", "indicator": "..."}, ...]'


@dataclass(frozen=True)
class Prediction:
    name: str
    indicator: str


@dataclass(frozen=True)
class AlignedPrediction:
    prediction: Prediction
    entity_id: str
    entity_name: str
    score: float


def parse_predictions(text: str) -> list[Prediction]:
    data = extract_json(text)
    if isinstance(data, dict):
        data = data.get("predictions", [data])
    if not isinstance(data, list):
        raise ParseError("supplement: expected a JSON list of predictions")
    out: list[Prediction] = []
    names: set[str] = set()
    for item in data:
        if not isinstance(item, dict):
            continue
        name, ind = item.get("predicted"), item.get("indicator")
        if not (isinstance(name, str) and name.strip() and isinstance(ind, str) and ind.strip()):
            continue
        if name.strip() not in names:
            names.add(name.strip())
            out.append(Prediction(name.strip(), ind.strip()))
    if not out:
        raise ParseError("supplement: no prediction with both 'predicted' and 'indicator'")
    return out[:MAX_PREDICTIONS]


async def predict_supplements(
    llm: ChatLLM, ctx: QuestionContext, rendered_paths: Sequence[str], settings: PoGSettings
) -> list[Prediction]:
    value, _ = await call_stage(
        llm,
        "supplement",
        settings,
        parse_predictions,
        REMINDER,
        schema=load_stage_schema("kgreason.pog", "supplement"),
        **ctx.fields(),
        paths=paths_field(rendered_paths) or "(none)",
    )
    return value


def align_predictions(
    predictions: Sequence[Prediction],
    entity_names: Mapping[str, str],
    embedder: Embedder,
    exclude: set[str],
) -> tuple[list[AlignedPrediction], list[str]]:
    """(aligned predictions, names that matched no subgraph entity)."""
    ids = sorted(i for i, n in entity_names.items() if i not in exclude and n and n != UNNAMED)
    if not ids:
        return [], [p.name for p in predictions]
    names = [entity_names[i] for i in ids]
    by_norm: dict[str, str] = {}
    for i, n in zip(ids, names, strict=True):
        by_norm.setdefault(normalize_name(n), i)
    matrix = embedder.embed(names)
    aligned: list[AlignedPrediction] = []
    unmatched: list[str] = []
    for p in predictions:
        exact = by_norm.get(normalize_name(p.name))
        if exact is not None:
            aligned.append(AlignedPrediction(p, exact, entity_names[exact], 1.0))
            continue
        idx, scores = cosine_topk(embedder.embed([p.name])[0], matrix, 1)
        if len(idx) and float(scores[0]) >= ALIGN_MIN:
            eid = ids[int(idx[0])]
            aligned.append(AlignedPrediction(p, eid, entity_names[eid], float(scores[0])))
        else:
            unmatched.append(p.name)
    return aligned, unmatched
