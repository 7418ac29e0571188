"""The ranker artefact on disk, and the ask-time `PathRanker` (numpy + the embedder only).

A directory holding:
    ranker.json   format/version, model kind, feature spec, the embedder to build, the KG it
                  was trained on (name, fingerprint, relation vocabulary), the training-set
                  fingerprint and size, validation metrics, training time and seed
    weights.safetensors  the scorer's parameters, feature standardisation and the PCA
                  projection (float32; safetensors comes with model2vec, the static embedder)
    training_questions.json  (optional) hashes of the training questions, so an evaluation
                  can leave them out (kgreason/eval/trained.py; not read when ranking)

It is never applied silently to another KG: `check_kg` names the KG it was trained on when the
fingerprint differs, and warns when the relation vocabulary differs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kgreason.embed.base import Embedder
from kgreason.pog.ranker.align import ALIGN_SCALARS, align_scalars, cached_vectors
from kgreason.pog.ranker.features import (
    N_SLOTS,
    SCALARS,
    build_rows,
    encode_slots,
    mask_question,
    n_features,
    path_keys,
    path_scalars,
    relation_text,
)
from kgreason.pog.ranker.model import Projection, Scorer, score_one_question
from kgreason.pog.ranker.order import (
    ORDER_SCALARS,
    order_alignment,
    question_phrases,
    reading_keys,
)
from kgreason.pog.ranker.supervision import answer_size
from kgreason.pog.types import ReasoningPath

FORMAT = "kgreason-path-ranker"
VERSION = 1
SPEC_FILE = "ranker.json"
WEIGHTS_FILE = "weights.safetensors"


class RankerError(ValueError):
    """A ranker artefact that cannot be used (missing, unreadable, other format/version)."""


@dataclass
class PathRanker:
    scorer: Scorer
    proj: Projection
    spec: dict[str, Any]
    embedder: Embedder
    #: the artefact directory it was loaded from (provenance only)
    source: Path | None = None
    _relvec: dict[str, np.ndarray] = field(default_factory=dict)
    #: unit raw vectors of relation texts and question words (alignment scalars)
    _rawvec: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def aligned(self) -> bool:
        """Whether the artefact's features include the alignment scalars (align.py)."""
        return self._scalars[: len(SCALARS) + len(ALIGN_SCALARS)] == [*SCALARS, *ALIGN_SCALARS]

    @property
    def ordered(self) -> bool:
        """Whether they also include the order-aware alignment (order.py)."""
        return self._scalars == [*SCALARS, *ALIGN_SCALARS, *ORDER_SCALARS]

    @property
    def _scalars(self) -> list[str]:
        return list(self.spec.get("features", {}).get("scalars", []))

    def unit_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Unit embedder vectors of `texts` (relation texts, question words), cached."""
        return cached_vectors(self.embedder.embed, self._rawvec, texts)

    @property
    def trained_on(self) -> dict[str, Any]:
        return self.spec.get("kg", {})

    def relation_vectors(self, relations: Sequence[str]) -> np.ndarray:
        todo = [r for r in dict.fromkeys(relations) if r not in self._relvec]
        if todo:
            vecs = self.proj(np.asarray(self.embedder.embed([relation_text(r) for r in todo])))
            self._relvec.update(zip(todo, vecs, strict=True))
        if not relations:
            return np.zeros((0, self.proj.dim), np.float32)
        return np.vstack([self._relvec[r] for r in relations])

    def _features(
        self,
        question: str,
        mentions: Sequence[str],
        paths: Sequence[ReasoningPath],
        topics: Sequence[str],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The question vector and per-path slots, signs, scalars and relation vectors:
        one place, so `score` and its training-row check cannot drift apart."""
        q = self.proj(np.asarray(self.embedder.embed([mask_question(question, mentions)])))[0]
        vocab: dict[str, int] = {}
        rel, sign = encode_slots([path_keys(p) for p in paths], vocab)
        if self.ordered:  # after rel: the primary relations keep their rows
            read_rel, read_sign = encode_slots([reading_keys(p) for p in paths], vocab)
        rels = sorted(vocab, key=vocab.__getitem__)
        relvec = self.relation_vectors(rels)
        n_topics = len(dict.fromkeys(topics))
        scalars = np.vstack([path_scalars(p, answer_size(p, topics), n_topics) for p in paths])
        if self.aligned:
            from kgreason.pog.ranker.words import content_words

            words = content_words(mask_question(question, mentions))
            rv = self.unit_vectors([relation_text(r) for r in rels])
            wv = self.unit_vectors(words) if words else rv[:0]
            scalars = np.concatenate([scalars, align_scalars(wv, rv, rel)], axis=1)
        if self.ordered:
            from kgreason.pog.ranker.words import STOPWORDS

            phrases, known = question_phrases(mask_question(question, mentions), STOPWORDS)
            texts = [relation_text(r) for r in rels]
            order = order_alignment(
                phrases,
                known,
                self.unit_vectors,
                read_rel,
                read_sign,
                texts,
                rel_vectors=rv,
            )
            scalars = np.concatenate([scalars, order[:, None].astype(np.float32)], axis=1)
        return q, rel, sign, scalars, relvec

    def score(
        self,
        question: str,
        mentions: Sequence[str],
        paths: Sequence[ReasoningPath],
        topics: Sequence[str],
    ) -> np.ndarray:
        """One score per path (higher = better); the question's topic mentions are masked."""
        if not paths:
            return np.zeros(0, np.float32)
        q, rel, sign, scalars, relvec = self._features(question, mentions, paths, topics)
        return score_one_question(self.scorer, q, rel, sign, scalars, relvec, N_SLOTS)

    def score_rows(
        self,
        question: str,
        mentions: Sequence[str],
        paths: Sequence[ReasoningPath],
        topics: Sequence[str],
    ) -> np.ndarray:
        """The same scores through the training-time feature rows (a check of `score`)."""
        q, rel, sign, scalars, relvec = self._features(question, mentions, paths, topics)
        x = build_rows(np.broadcast_to(q, (len(paths), q.shape[0])), rel, sign, scalars, relvec)
        return self.scorer.score(x).astype(np.float32)


def save_ranker(
    out: Path,
    scorer: Scorer,
    proj: Projection,
    meta: dict[str, Any],
    scalars: Sequence[str] = SCALARS,
) -> Path:
    """Write the artefact directory (weights as float32 safetensors, the rest as JSON)."""
    from safetensors.numpy import save_file

    if len(scorer.mu) != n_features(proj.dim, len(scalars)):
        raise ValueError(
            f"the scorer reads {len(scorer.mu)} features, but {len(scalars)} scalars at "
            f"{proj.dim} dims make {n_features(proj.dim, len(scalars))}: pass the training's "
            "scalars (TrainResult.scalars)"
        )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spec = {
        "format": FORMAT,
        "version": VERSION,
        "model": {"kind": scorer.kind, "n_params": scorer.n_params()},
        "features": {
            "slots": N_SLOTS,
            "scalars": list(scalars),
            "pca_dim": proj.dim,
            "relation_text": "last segment of '.'/'__' path, '_' -> ' '",
            "mask": "[mention] and topic names -> X",
        },
        **meta,
    }
    arrays = {f"param_{k}": v for k, v in scorer.params.items()}
    arrays.update(mu=scorer.mu, sd=scorer.sd, pca_mean=proj.mean, pca_components=proj.components)
    save_file(
        {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in arrays.items()},
        str(out / WEIGHTS_FILE),
    )
    (out / SPEC_FILE).write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
    return out


def read_spec(path: Path) -> dict[str, Any]:
    f = Path(path) / SPEC_FILE
    if not f.is_file():
        raise RankerError(f"{path}: not a ranker artefact (no {SPEC_FILE})")
    try:
        spec = json.loads(f.read_text())
    except ValueError as e:
        raise RankerError(f"{f}: unreadable JSON: {e}") from e
    if spec.get("format") != FORMAT or spec.get("version") != VERSION:
        raise RankerError(
            f"{f}: format {spec.get('format')!r} version {spec.get('version')!r}; "
            f"this kgreason reads {FORMAT!r} version {VERSION}"
        )
    return spec


def load_ranker(path: Path, embedder: Embedder | None = None) -> PathRanker:
    """Load an artefact; the embedder it was trained with is built unless one is passed."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    spec = read_spec(path)
    try:
        z = load_file(str(Path(path) / WEIGHTS_FILE))
        params = {k.removeprefix("param_"): v for k, v in z.items() if k.startswith("param_")}
        scorer = Scorer(spec["model"]["kind"], z["mu"], z["sd"], params)
        proj = Projection(z["pca_mean"], z["pca_components"])
    except (OSError, KeyError, ValueError, SafetensorError) as e:
        raise RankerError(f"{path}: unreadable {WEIGHTS_FILE}: {e}") from e
    if embedder is None:
        from kgreason.embed import build_embedder
        from kgreason.embed.settings import EmbedSettings

        embedder = build_embedder(EmbedSettings(**spec["embedder"]))
    dim = getattr(embedder, "dim", None)
    dim = int(dim) if dim is not None else int(proj.mean.shape[0])
    if dim != proj.mean.shape[0]:
        raise RankerError(
            f"{path}: trained with {spec['embedder']} ({proj.mean.shape[0]} dims), "
            f"given an embedder of {dim} dims"
        )
    return PathRanker(scorer, proj, spec, embedder, Path(path))


def check_kg(
    ranker: PathRanker, kg_name: str, fingerprint: str, relations: Sequence[str]
) -> list[str]:
    """Warnings (for the caller to show) when `ranker` meets a KG other than the one it was trained on."""
    kg = ranker.trained_on
    out = []
    if fingerprint != kg.get("fingerprint"):
        out.append(
            f"path ranker trained on KG {kg.get('name')!r} (fingerprint "
            f"{str(kg.get('fingerprint'))[:12]}), applied to {kg_name!r} ({fingerprint[:12]})"
        )
    trained = set(kg.get("relations", []))
    if relations and trained != set(relations):
        new = sorted(set(relations) - trained)
        out.append(
            f"relation vocabulary differs from the ranker's training KG: {len(new)} relations "
            f"it never saw (e.g. {', '.join(new[:3])}), {len(trained - set(relations))} missing"
        )
    return out
