"""Training: template split, text encoding, listwise training of each model kind, choice by
validation Hits@1, metrics per hop count. Deterministic for a given seed.

Targets: a question's candidates get t ~ F1^4 (kept where F1 >= half the best F1), so the
path whose answer set matches the gold set best dominates; questions with no candidate
touching a gold answer do not train (they are still counted, as misses, in validation).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kgreason.embed.base import Embedder
from kgreason.pog.ranker.align import ALIGN_SCALARS, align_scalars, unit
from kgreason.pog.ranker.features import N_SLOTS, SCALARS, build_rows, n_features, relation_text
from kgreason.pog.ranker.model import Adam, Projection, Scorer, init_scorer, listwise_step
from kgreason.pog.ranker.order import ORDER_SCALARS
from kgreason.pog.ranker.supervision import SupervisedSet

#: candidate rows the feature standardisation reads at most: 2,000 questions of a 1M-triple
#: KG hold millions of candidates, and building all their rows peaked at 15.5 GB
MAX_STANDARDISE_ROWS = 200_000


@dataclass
class TrainConfig:
    kinds: tuple[str, ...] = ("linear", "mlp")
    hidden: int = 64
    pca_dim: int = 24
    epochs: int = 4
    batch: int = 64
    #: candidates per question in a training batch (all positives first, then sampled)
    k: int = 32
    lr: float = 2e-3
    l2: float = 1e-4
    seed: int = 0
    valid_fraction: float = 0.2
    #: add the word-to-hop alignment scalars (align.py), which carry across KGs
    align: bool = True
    #: and the order-aware alignment (order.py; only with `align`). Off by default: on
    #: label-free training it moved PathQuestion Hits@1 both ways (docs/ranker.md) and cost
    #: the company KG's "where is [Initech] headquartered" its 1-hop answer
    order: bool = False

    @property
    def scalars(self) -> tuple[str, ...]:
        if not self.align:
            return SCALARS
        return SCALARS + ALIGN_SCALARS + (ORDER_SCALARS if self.order else ())


@dataclass
class Encoded:
    """Embedder vectors of the masked questions and of the relation texts, raw and projected."""

    q_raw: np.ndarray
    rel_raw: np.ndarray
    proj: Projection
    q: np.ndarray
    rel: np.ndarray
    #: per candidate row, the alignment scalars (align.py), or None without them
    extra: np.ndarray | None = None


def encode(
    sup: SupervisedSet,
    embedder: Embedder,
    pca_dim: int,
    proj: Projection | None = None,
    *,
    align: bool = False,
    order: bool = False,
) -> Encoded:
    q_raw = np.asarray(embedder.embed(sup.masked), dtype=np.float32)
    rel_raw = np.asarray(embedder.embed([relation_text(r) for r in sup.vocab]), dtype=np.float32)
    if proj is None:
        proj = Projection.fit(np.vstack([q_raw, rel_raw]), pca_dim)
    extra = alignment_rows(sup, embedder, unit(rel_raw)) if align else None
    if extra is not None and order:
        extra = np.concatenate([extra, order_rows(sup, embedder, unit(rel_raw))], axis=1)
    return Encoded(q_raw, rel_raw, proj, proj(q_raw), proj(rel_raw), extra)


def alignment_rows(sup: SupervisedSet, embedder: Embedder, rel_unit: np.ndarray) -> np.ndarray:
    """align_scalars for every candidate row, question by question (words embedded once)."""
    from kgreason.pog.ranker.words import content_words

    words = [content_words(m) for m in sup.masked]
    vocab = list(dict.fromkeys(w for ws in words for w in ws))
    vecs = unit(np.asarray(embedder.embed(vocab))) if vocab else np.zeros((0, rel_unit.shape[1]))
    row = {w: i for i, w in enumerate(vocab)}
    out = np.zeros((len(sup.rel), len(ALIGN_SCALARS)), np.float32)
    for i, ws in enumerate(words):
        sl = sup.candidates(i)
        wv = vecs[[row[w] for w in ws]] if ws else vecs[:0]
        out[sl] = align_scalars(wv, rel_unit, sup.rel[sl])
    return out


def order_rows(sup: SupervisedSet, embedder: Embedder, rel_unit: np.ndarray) -> np.ndarray:
    """order_alignment (order.py) for every candidate row, question by question, from the
    hops as read forward (SupervisedSet.readings)."""
    from kgreason.pog.ranker.order import order_alignment, question_phrases
    from kgreason.pog.ranker.words import STOPWORDS

    cache: dict[str, np.ndarray] = {}

    def vectors(texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if todo:
            cache.update(zip(todo, unit(np.asarray(embedder.embed(todo))), strict=True))
        return np.vstack([cache[t] for t in texts])

    texts = [relation_text(r) for r in sup.vocab]
    rel, sign = sup.readings()
    out = np.zeros((len(sup.rel), len(ORDER_SCALARS)), np.float32)
    for i, masked in enumerate(sup.masked):
        sl = sup.candidates(i)
        phrases, known = question_phrases(masked, STOPWORDS)
        out[sl, 0] = order_alignment(
            phrases,
            known,
            vectors,
            rel[sl],
            sign[sl],
            texts,
            rel_vectors=rel_unit,
        )
    return out


def rows_for(sup: SupervisedSet, enc: Encoded, qidx: np.ndarray, cand: np.ndarray) -> np.ndarray:
    scalars = sup.scalars[cand]
    if enc.extra is not None:
        scalars = np.concatenate([scalars, enc.extra[cand]], axis=1)
    return build_rows(enc.q[qidx], sup.rel[cand], sup.sign[cand], scalars, enc.rel)


def targets(f1: np.ndarray) -> np.ndarray:
    t = np.where(f1 >= 0.5 * f1.max(), f1**4, 0.0)
    return t / t.sum() if t.sum() > 0 else t


def score_questions(
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray], sup: SupervisedSet, idx: Sequence[int]
) -> list[np.ndarray]:
    """Scores of every candidate of each question in `idx`, computed in chunks of rows."""
    out: list[np.ndarray] = []
    chunk: list[int] = []
    size = 0

    def flush() -> None:
        nonlocal chunk, size
        if not chunk:
            return
        qidx = np.concatenate([np.full(sup.offsets[i + 1] - sup.offsets[i], i) for i in chunk])
        cand = np.concatenate([np.arange(sup.offsets[i], sup.offsets[i + 1]) for i in chunk])
        s = fn(qidx.astype(np.int64), cand.astype(np.int64))
        a = 0
        for i in chunk:
            n = int(sup.offsets[i + 1] - sup.offsets[i])
            out.append(s[a : a + n])
            a += n
        chunk, size = [], 0

    for i in idx:
        chunk.append(i)
        size += int(sup.offsets[i + 1] - sup.offsets[i])
        if size > 20_000:
            flush()
    flush()
    return out


def metrics(sup: SupervisedSet, idx: Sequence[int], scores: Sequence[np.ndarray]) -> dict:
    """Hits@1 (first answer of the top path is gold), set F1 and gold-among-top-path, per
    hop count and overall, in %. Ties go to the earlier (shorter) candidate."""
    per: dict[str, list[tuple[bool, float, bool]]] = {}
    for i, s in zip(idx, scores, strict=True):
        sl = sup.candidates(i)
        row = (False, 0.0, False)
        if len(s):
            j = sl.start + int(np.argmax(s))
            row = (bool(sup.first_hit[j]), float(sup.f1[j]), bool(sup.hit[j]))
        for key in (f"{sup.questions[i].hops}-hop", "all"):
            per.setdefault(key, []).append(row)
    return {
        k: {
            "n": len(v),
            "hits1": 100 * float(np.mean([r[0] for r in v])),
            "f1": 100 * float(np.mean([r[1] for r in v])),
            "gold_in_top": 100 * float(np.mean([r[2] for r in v])),
        }
        for k, v in sorted(per.items())
    }


def zero_shot_scores(sup: SupervisedSet, enc: Encoded, idx: Sequence[int], penalty: float):
    """Hop-aligned similarity from the arrays: mean over hops of cos(question, relation)."""

    def fn(qidx: np.ndarray, cand: np.ndarray) -> np.ndarray:
        rel = sup.rel[cand]
        present = rel >= 0
        cos = np.einsum("nd,nsd->ns", enc.q_raw[qidx], enc.rel_raw[np.maximum(rel, 0)])
        n = present.sum(1)
        length = sup.scalars[cand][:, :4] @ np.array([1, 2, 3, 4], np.float32)
        return (cos * present).sum(1) / np.maximum(n, 1) - penalty * (length - 1)

    return score_questions(fn, sup, idx)


@dataclass
class TrainResult:
    scorer: Scorer
    proj: Projection
    kind: str
    #: the scalar features the scorer reads (TrainConfig.scalars)
    scalars: tuple[str, ...] = SCALARS
    #: kind -> validation metrics (per hop and "all")
    valid: dict[str, dict] = field(default_factory=dict)
    train_s: dict[str, float] = field(default_factory=dict)
    n_train: int = 0
    n_valid: int = 0
    n_positive: int = 0
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _batches(
    sup: SupervisedSet, idx: np.ndarray, cfg: TrainConfig, rng: np.random.Generator
) -> Any:
    order = rng.permutation(idx)
    for a in range(0, len(order), cfg.batch):
        qs = order[a : a + cfg.batch]
        cand = np.full((len(qs), cfg.k), -1, dtype=np.int64)
        tgt = np.zeros((len(qs), cfg.k), dtype=np.float32)
        for b, i in enumerate(qs):
            lo, hi = int(sup.offsets[i]), int(sup.offsets[i + 1])
            f1 = sup.f1[lo:hi]
            pos = np.flatnonzero(f1 > 0)
            pos = pos[np.argsort(-f1[pos], kind="stable")][: cfg.k // 2]
            neg = np.flatnonzero(f1 == 0)
            take = min(len(neg), cfg.k - len(pos))
            neg = rng.choice(neg, take, replace=False) if take < len(neg) else neg
            sel = np.concatenate([pos, neg]).astype(np.int64)
            cand[b, : len(sel)] = lo + sel
            tgt[b, : len(sel)] = targets(f1[sel])
        valid = cand >= 0
        flat = np.where(valid, cand, 0).reshape(-1)
        qidx = np.repeat(qs, cfg.k)
        yield cand, tgt, valid, flat, qidx


def train(
    sup: SupervisedSet,
    embedder: Embedder,
    cfg: TrainConfig,
    train_idx: Sequence[int],
    valid_idx: Sequence[int],
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> TrainResult:
    """Train every kind in `cfg.kinds`; keep, per kind, the epoch with the best validation
    Hits@1; return the kind with the best validation Hits@1."""
    rng = np.random.default_rng(cfg.seed)
    enc = encode(sup, embedder, cfg.pca_dim, align=cfg.align, order=cfg.align and cfg.order)
    positive = sup.positive()
    tr = np.array([i for i in train_idx if positive[i]], dtype=np.int64)
    # feature standardisation from a sample of training rows
    sample_q = rng.choice(tr, min(len(tr), 2000), replace=False) if len(tr) else tr
    cand = np.concatenate([np.arange(sup.offsets[i], sup.offsets[i + 1]) for i in sample_q])
    qidx = np.concatenate([np.full(sup.offsets[i + 1] - sup.offsets[i], i) for i in sample_q])
    if len(cand) > MAX_STANDARDISE_ROWS:  # thousands of paths per question (1M-triple KGs)
        keep = np.sort(rng.choice(len(cand), MAX_STANDARDISE_ROWS, replace=False))
        cand, qidx = cand[keep], qidx[keep]
    x = rows_for(sup, enc, qidx, cand)
    mu, sd = x.mean(0), x.std(0)
    # floor: a feature nearly constant in training must not explode on unseen questions
    sd = np.maximum(sd, np.median(sd[sd > 0]) if (sd > 0).any() else 1.0)
    assert x.shape[1] == n_features(enc.proj.dim, len(cfg.scalars)) and N_SLOTS == 3
    result = TrainResult(
        None,  # type: ignore[arg-type]
        enc.proj,
        "",
        cfg.scalars,
        n_train=len(train_idx),
        n_valid=len(valid_idx),
    )
    result.n_positive = int(positive.sum())
    best_all: tuple[float, Scorer | None, str] = (-1.0, None, "")
    n_batches = (len(tr) + cfg.batch - 1) // cfg.batch
    for kind in cfg.kinds:
        t0 = time.perf_counter()
        m = init_scorer(kind, mu, sd, cfg.hidden, cfg.seed)
        opt = Adam(m.params, cfg.lr * (5 if kind == "linear" else 1))
        best: tuple[float, dict[str, np.ndarray] | None, dict] = (-1.0, None, {})
        hist = result.history.setdefault(kind, [])
        for epoch in range(cfg.epochs):
            losses = []
            for n, (c, tgt, valid, flat, qi) in enumerate(_batches(sup, tr, cfg, rng)):
                xb = rows_for(sup, enc, qi, flat).reshape(len(c), cfg.k, -1)
                loss, g = listwise_step(m, xb, tgt, valid, cfg.l2)
                opt.step(m.params, g)
                losses.append(loss)
                if progress is not None:
                    progress(kind, epoch * n_batches + n + 1, cfg.epochs * n_batches)
            val = metrics(sup, valid_idx, _scores(m, sup, enc, valid_idx)) if valid_idx else {}
            h1 = val.get("all", {}).get("hits1", 0.0)
            hist.append({"epoch": epoch + 1, "loss": float(np.mean(losses)), "valid_hits1": h1})
            if h1 > best[0] or best[1] is None:
                best = (h1, {k: v.copy() for k, v in m.params.items()}, val)
        m.params = best[1] or m.params
        result.train_s[kind] = time.perf_counter() - t0
        result.valid[kind] = best[2]
        if best[0] > best_all[0]:
            best_all = (best[0], m, kind)
    result.scorer, result.kind = best_all[1], best_all[2]  # type: ignore[assignment]
    return result


def _scores(m: Scorer, sup: SupervisedSet, enc: Encoded, idx: Sequence[int]) -> list[np.ndarray]:
    return score_questions(lambda qi, c: m.score(rows_for(sup, enc, qi, c)), sup, idx)
