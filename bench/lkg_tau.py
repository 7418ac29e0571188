"""Where to put SymbolLKG's anchor threshold tau (eq. 1) for our embedder.

The paper uses BGE-M3 and gives no value for tau (it writes tau_sim, eq. 1); our default 0.5
is our choice for it. Its log (Appendix B) shows kept rules at cosines
0.83-0.89. We embed with MiniLM (all-MiniLM-L6-v2, torch-free), whose cosines sit much
lower, so 0.5 does not carry over. This measures, on real premise/query pairs of the shared
logic data, the cosine between the question (what retrieval embeds: the query text) and
each premise sentence (what a rule/constraint node embeds: its description or raw text):

- ProntoQA: premises in the gold proof (`explanation`) vs the distractor premises, so the
  table shows, per threshold, the share of gold premises kept and of distractors kept;
- FOLIO and ProofWriter: the distribution of all pairs (no gold premises in these files).

    python bench/lkg_tau.py [--problems 150] [--backend minilm|static]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path

import numpy as np

from kgreason.embed.factory import build_embedder
from kgreason.embed.settings import EmbedSettings

SHARED = Path(
    os.environ.get("KGREASON_SHARED_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared/data"
)
_SENT = re.compile(r"(?<=[.!?])\s+")
_QUERY = re.compile(r"^.*?(true or false\?|correct\?)\s*", re.I)
THRESHOLDS = (0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.split(text.strip()) if s.strip()]


def query_of(question: str) -> str:
    """'Is the following statement true or false? Max is sour.' -> 'Max is sour.'"""
    return _QUERY.sub("", question).strip() or question


def pairs(dataset: str, n: int) -> list[tuple[str, list[str], set[str]]]:
    """(query, premises, gold premises) of the first n problems."""
    data = json.loads((SHARED / "logic" / dataset / "dev.json").read_text("utf-8"))[:n]
    out = []
    for d in data:
        prem = sentences(d["context"])
        gold = {s for s in d.get("explanation", []) if s in prem}
        out.append((query_of(d["question"]), prem, gold))
    return out


def cosines(embedder, problems) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """All gold-pair cosines, all other-pair cosines, and each problem's cosine vector."""
    gold, other, per = [], [], []
    for q, prem, g in problems:
        vecs = embedder.embed([q, *prem])
        c = vecs[1:] @ vecs[0]
        per.append(c)
        for s, v in zip(prem, c, strict=True):
            (gold if s in g else other).append(float(v))
    return np.array(gold), np.array(other), per


def pct(xs: np.ndarray) -> str:
    qs = np.percentile(xs, [5, 25, 50, 75, 95]) if xs.size else [float("nan")] * 5
    return " ".join(f"{q:5.2f}" for q in qs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", type=int, default=150)
    ap.add_argument("--backend", default="minilm")
    a = ap.parse_args()
    emb = build_embedder(EmbedSettings(backend=a.backend))
    print(
        f"embedder {emb.name}; {a.problems} problems per dataset; cosine percentiles 5/25/50/75/95"
    )
    t0 = time.perf_counter()
    gold, other, per = cosines(emb, pairs("ProntoQA", a.problems))
    print(f"ProntoQA gold premises   n={gold.size:5d}  {pct(gold)}")
    print(f"ProntoQA distractors     n={other.size:5d}  {pct(other)}")
    top1 = [float(c.max()) for c in per]
    print(f"ProntoQA best premise per question        {pct(np.array(top1))}")
    for ds in ("FOLIO", "ProofWriter"):
        _, allc, _ = cosines(emb, pairs(ds, a.problems))
        print(f"{ds:12s} all pairs    n={allc.size:5d}  {pct(allc)}")
    print("\ntau   gold kept  distractors kept  questions with >=1 vector anchor")
    for t in THRESHOLDS:
        g = float((gold >= t).mean()) if gold.size else float("nan")
        o = float((other >= t).mean()) if other.size else float("nan")
        q = float(np.mean([bool((c >= t).any()) for c in per]))
        print(f"{t:4.2f}  {100 * g:8.1f}%  {100 * o:15.1f}%  {100 * q:10.1f}%")
    print(f"\n({time.perf_counter() - t0:.1f}s)")


if __name__ == "__main__":
    main()
