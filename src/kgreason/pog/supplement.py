"""LLM supplement (section 4.2, phase 2): the model predicts likely answer entities with a new
indicator for each, from the paths seen so far and its own knowledge; each prediction is then
aligned to an entity of the question subgraph by text similarity, so that phase 2 searches
paths to real KG entities only.

Alignment: an exact (case/diacritic-insensitive) name match wins; otherwise the subgraph entity
whose name embedding is most similar to the predicted name, if its cosine is at least
ALIGN_MIN. Predictions that match nothing, or match a topic entity, are dropped and recorded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kgreason.embed.base import Embedder, cosine_topk
from kgreason.kg.base import UNNAMED
from kgreason.kg.ranking import normalize_name
from kgreason.llm.base import ChatLLM
from kgreason.llm.parse import ParseError, extract_json, split_items
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


#: the paper's order (Appendix E): "first provide three predicted results, and second offer
#: three possible chains of thought"; as labelled lines, a label's number pairs them
_PRED_LABEL = re.compile(
    r"^[\s*#>-]*+(?:\d++[.)]\s*+)?predict(?:ed|ions?)"
    r"(?:[\s_-]++(?:results?|answers?|entit(?:y|ies)))?[\s_-]*+(\d*+)\s*+:\s*+",
    re.I,
)
_CHAIN_LABEL = re.compile(
    r"^[\s*#>-]*+(?:\d++[.)]\s*+)?(?:possible[\s_-]++)?(?:chains?[\s_-]*+of[\s_-]*+thoughts?|"
    r"cot|(?:(?:think|llm)[\s_-]*+)?indicators?)[\s_-]*+\d*+\s*+:\s*+",
    re.I,
)
_BRACED = re.compile(r"\{([^{}]*)\}")
_QUOTES = "\"'\u201c\u201d\u2018\u2019 "


def _named(value: str, numbered: bool) -> list[str]:
    """`{A}, {B}` or (an unnumbered label) `A, B, C` as names; a numbered label's value is
    one name, commas and all ("Washington, D.C.")."""
    braced = _BRACED.findall(value)
    if braced:
        return braced
    return [value] if numbered else split_items(value)


def _text_predictions(text: str) -> list[tuple[str, str]]:
    """(name, chain) pairs from labelled lines, the i-th result with the i-th chain."""
    names: list[str] = []
    chains: list[str] = []
    for line in text.splitlines():
        if m := _PRED_LABEL.match(line):
            names += _named(line[m.end() :].strip(), bool(m.group(1)))
        elif m := _CHAIN_LABEL.match(line):
            chains.append(line[m.end() :].strip())
    names = [n.strip(_QUOTES) for n in names]
    return list(zip(names, chains, strict=False))


def _json_predictions(text: str) -> list[tuple[object, object]]:
    data = extract_json(text)
    if isinstance(data, dict):
        data = data.get("predictions", [data])
    if not isinstance(data, list):
        raise ParseError("supplement: expected a JSON list of predictions")
    return [(d.get("predicted"), d.get("indicator")) for d in data if isinstance(d, dict)]


def parse_predictions(text: str) -> list[Prediction]:
    """At most three (name, indicator) predictions: the JSON list our prompt asks for or,
    failing that, the paper's order as lines (`Predicted results: {A}, {B}, {C}`, then
    `Chain of thought 1: ...`)."""
    error: ParseError | None = None
    try:
        pairs = _json_predictions(text)
    except ParseError as e:
        pairs, error = [], e
    out = _valid(pairs)
    if not out:
        out = _valid(_text_predictions(text))
    if not out and error is not None and not _text_predictions(text):
        raise error
    if not out:
        raise ParseError("supplement: no prediction with both 'predicted' and 'indicator'")
    return out[:MAX_PREDICTIONS]


def _valid(pairs: Sequence[tuple[object, object]]) -> list[Prediction]:
    out: list[Prediction] = []
    names: set[str] = set()
    for name, ind in pairs:
        if not (isinstance(name, str) and name.strip() and isinstance(ind, str) and ind.strip()):
            continue
        if name.strip() not in names:
            names.add(name.strip())
            out.append(Prediction(name.strip(), ind.strip()))
    return out


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
