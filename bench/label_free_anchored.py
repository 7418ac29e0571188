"""Can label-free training beat the zero-shot ranking it starts from? (issue 37, a negative
result kept reproducible.)

On one PathQuestion KG: questions generated from its triples (synth.py, 500 per hop, seed
0), optionally with each relation word replaced, with probability --synonyms, by one of
its 8 nearest words in the static model's vocabulary (no other relation's word, no word
sharing its first 4 letters: "parents" -> "mothers", "institution" -> "university"), so
the generated questions stop naming the relations literally. Candidates are searched with
`pog.revisit_when_empty = "on"` (what the default does for a zero-shot ranking). Then
listwise training (the targets of train.py) of a RESIDUAL on the zero-shot order-aligned
score: s = order_aligned + z(features) . w, w from 0, L2 `lam` on w, over three feature
sets: structural (path length, end-set size, hub degree, topic joins), + the word-to-hop
alignment scalars, + the alignment's parts. Scored: Hits@1 of the top path's first answer
on the real questions lo..hi of the file (300-600 by default: the slice the zero-shot
weights were chosen on, so 0-300 stays unseen) and on the generated ones.

    python bench/label_free_anchored.py [--file PQ-2H] [--synonyms 0.9] [--lo 300 --hi 600]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ranker_bench as rb
from ranker_loko import open_file_kg, questions

STRUCT = 8  # features.SCALARS


def synonyms(words: set[str], k: int = 8) -> dict[str, list[str]]:
    from kgreason.embed.static import StaticEmbedder

    emb = StaticEmbedder()
    vocab = [w for w in emb._model.tokenizer.get_vocab() if re.fullmatch(r"[a-z]{3,}", w)]
    v = emb.embed(vocab)
    v /= np.linalg.norm(v, axis=1, keepdims=True) + 1e-9
    out = {}
    for w in sorted(words):
        q = emb.embed([w])[0]
        near = [vocab[i] for i in np.argsort(-(v @ (q / np.linalg.norm(q))))[:60]]
        out[w] = [x for x in near if x not in words and not x.startswith(w[:4])][:k]
    return out


def reword(qs: list, near: dict[str, list[str]], p: float, seed: int = 1) -> list:
    rng = random.Random(seed)
    out = []
    for q in qs:
        parts = re.split(r"(\[[^\]]*\])", q.text)  # topic mentions stay as they are
        for j in range(0, len(parts), 2):
            parts[j] = " ".join(
                rng.choice(near[w]) if near.get(w) and rng.random() < p else w
                for w in parts[j].split(" ")
            )
        out.append(replace(q, text="".join(parts)))
    return out


def parse_args(ap: argparse.ArgumentParser, argv: list[str] | None, lo: int, hi: int):
    """The options both label-free benches take (rewording, the real questions' slice, the
    stores' folder), parsed; exits when PathQuestion is not there."""
    ap.add_argument("--synonyms", type=float, default=0.9)
    ap.add_argument("--lo", type=int, default=lo)
    ap.add_argument("--hi", type=int, default=hi)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-loko"))
    args = ap.parse_args(argv)
    if not rb.PQ.is_dir():
        sys.exit(f"no PathQuestion at {rb.PQ} (set KGREASON_SHARED_DATA)")
    args.work.mkdir(parents=True, exist_ok=True)
    return args


async def generated(kg, per_hop: int, p: float) -> list:
    """Questions generated from the KG's triples (synth.py, seed 0), their relation words
    reworded with probability p (none when p is 0)."""
    from kgreason.pog.ranker import synth
    from kgreason.pog.ranker.features import relation_text
    from kgreason.pog.ranker.supervision import all_triples

    triples = all_triples(kg)
    sampled = synth.sample(triples, synth.SynthConfig(per_hop=per_hop, seed=0))
    names = await kg.names(list(dict.fromkeys(e for x in sampled for e in x.ids)))
    made = synth.questions(sampled, names, 0)
    words = {w for r in {t.relation for t in triples} for w in relation_text(r).split()}
    return reword(made, synonyms(words), p) if p > 0 else made


def rows(sup, emb) -> np.ndarray:
    """Per candidate: [order-aligned score, its alignment, its tie-break, SCALARS, ALIGN]:
    train.encode's alignment scalars and order alignment (OrderAlignedRanker's defaults),
    and the ranker's tie-break (0.5 x the hops' mean whole-question similarity)."""
    from kgreason.pog.ranker.align import unit
    from kgreason.pog.ranker.train import encode

    enc = encode(sup, emb, 6, align=True, order=True)
    align, order = enc.extra[:, :-1], enc.extra[:, -1]
    rel, _ = sup.readings()
    qidx = np.repeat(np.arange(len(sup)), np.diff(sup.offsets))
    cos = np.einsum("nd,nkd->nk", unit(enc.q_raw)[qidx], unit(enc.rel_raw)[np.maximum(rel, 0)])
    tie = np.where(rel >= 0, cos, 0).sum(1) / np.maximum((rel >= 0).sum(1), 1)
    zs = np.stack([order + 0.5 * tie, order, tie], 1).astype(np.float32)
    return np.concatenate([zs, sup.scalars, align], axis=1)


def hits1(sup, score) -> float:
    from kgreason.pog.ranker.train import metrics, score_questions

    idx = list(range(len(sup)))
    return metrics(sup, idx, score_questions(lambda qi, c: score(c), sup, idx))["all"]["hits1"]


def fit_residual(sup, x, cols, lam, epochs=20, lr=0.02, seed=0):
    """w of s = x[:, 0] + z(x[:, cols]) . w, listwise on train.py's batches (positives
    first, then sampled negatives; its targets); returns a scorer maker per row matrix."""
    from kgreason.pog.ranker.train import TrainConfig, _batches

    cfg = TrainConfig(seed=seed)
    rng = np.random.default_rng(seed)
    z = x[:, cols]
    mu, sd = z.mean(0), z.std(0) + 1e-6
    w, m, v, t = np.zeros(len(cols)), np.zeros(len(cols)), np.zeros(len(cols)), 0
    tr = np.flatnonzero(sup.positive())
    for _ in range(epochs):
        for cand, tgt, ok, flat, _q in _batches(sup, tr, cfg, rng):
            zb = ((z[flat] - mu) / sd).reshape(*cand.shape, -1)
            s = np.where(ok, x[flat, 0].reshape(cand.shape) + zb @ w, -1e9)
            p = np.exp(s - s.max(1, keepdims=True)) * ok
            p /= p.sum(1, keepdims=True)
            g = ((p - tgt)[:, :, None] * zb).sum((0, 1)) / len(cand) + lam * w
            t += 1
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
            w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return lambda xx: lambda c: xx[c, 0] + ((xx[c][:, cols] - mu) / sd) @ w


async def main(argv: list[str] | None = None) -> None:
    from kgreason.embed import build_embedder
    from kgreason.embed.settings import EmbedSettings
    from kgreason.pog.ranker.supervision import PathEnumerator, supervise
    from kgreason.pog.settings import PoGSettings

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--file", default="PQ-2H", choices=rb.PQ_FILES)
    args = parse_args(ap, argv, lo=300, hi=600)
    emb = build_embedder(EmbedSettings(backend="static"))
    kg = open_file_kg(args.file, args.work)
    settings = PoGSettings(revisit_when_empty="on")
    made = await generated(kg, 500, args.synonyms)
    enum = PathEnumerator(kg, settings)
    real = await supervise(
        kg, await questions(kg, args.file, args.lo, args.hi), settings, enumerator=enum
    )
    gen = await supervise(kg, made, settings, enumerator=enum)
    xr, xg = rows(real, emb), rows(gen, emb)
    print(f"{args.file}: real questions {args.lo}-{args.hi} ({len(real)}), generated {len(gen)}"
          f" (relation words reworded with p={args.synonyms})")  # fmt: skip
    print(f"  zero-shot order-aligned           real {hits1(real, lambda c: xr[c, 0]):5.1f}"
          f"  generated {hits1(gen, lambda c: xg[c, 0]):5.1f}")  # fmt: skip
    n = xg.shape[1]
    sets = {
        "structural": list(range(3, 3 + STRUCT)),
        "+ alignment": list(range(3, n)),
        "+ alignment parts": list(range(1, n)),
    }
    for label, cols in sets.items():
        for lam in (0.01, 0.1, 1.0):
            on = fit_residual(gen, xg, cols, lam)  # trained on generated questions only
            fr, fg = on(xr), on(xg)
            print(f"  residual {label:<18} lam {lam:<4}  real {hits1(real, fr):5.1f}"
                  f"  generated {hits1(gen, fg):5.1f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
