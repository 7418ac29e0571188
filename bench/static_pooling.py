"""The static model's word-by-word pooling (embed/wordpool.py) against model2vec's own
`encode`, in one process, on real path texts: time, ratio, and how far the vectors differ.

Text sets:
- MetaQA: the pooled LLM-free path texts of the first N dev questions on the bundled KG
  (bench/fuzzy_prefilter.py's pool; needs MetaQA, see KGREASON_SHARED_DATA);
- scale: every LLM-free path text of chosen questions of a synthetic store made by
  bench/pog_scale.py (a 10M hub question has 20,000), as fuzzy ranking renders them.

    python bench/static_pooling.py [--questions 200] [--repeat 3]
    python bench/static_pooling.py --scale 10000000 --scale-questions 100,10,67,149
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzzy_prefilter import path_texts, pooled_texts
from kgreason.embed.static import StaticEmbedder
from kgreason.pog.settings import PoGSettings


def scale_texts(store: Path, questions: list[int]) -> list[tuple[str, list[str]]]:
    from kgreason.kg.store import StoreKG

    kg, s = StoreKG(store / "store"), PoGSettings()
    qs = json.loads((store / "questions.json").read_text())
    return [(f"{store.name} q{i}", path_texts(kg, qs[i]["topics"], s)) for i in questions]


def best_of(k: int, f) -> tuple[float, np.ndarray]:
    best, got = float("inf"), None
    for _ in range(k):
        t0 = time.perf_counter()
        got = f()
        best = min(best, time.perf_counter() - t0)
    assert got is not None
    return best, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=200, help="MetaQA 3-hop dev questions")
    ap.add_argument("--scale", type=int, help="a synthetic store size (bench/pog_scale.py)")
    ap.add_argument("--scale-questions", default="100,10,67,149")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-scale"))
    ap.add_argument("--repeat", type=int, default=3, help="best of k runs of each")
    args = ap.parse_args()
    if args.scale:
        idx = [int(x) for x in args.scale_questions.split(",")]
        sets = scale_texts(args.work / f"n{args.scale}-s0", idx)
    else:
        _, pool = pooled_texts(args.questions, 3)
        sets = [(f"MetaQA 3-hop dev, {args.questions} questions pooled", pool)]
    emb = StaticEmbedder()
    assert emb._pooler is not None, "the vendored model is not pooled by words"

    def model2vec(texts: list[str]) -> np.ndarray:
        out = emb._encode(texts)
        n = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(n > 0, n, 1.0)

    print(f"best of {args.repeat}; model2vec {__import__('model2vec').__version__}")
    for name, texts in sets:
        words = [w for t in texts for w in t.split(" ")]
        old_s, old = best_of(args.repeat, lambda t=texts: model2vec(t))
        new_s, new = best_of(args.repeat, lambda t=texts: emb.embed(t))
        print(
            f"{name}: {len(texts):,} texts, {len(words):,} words ({len(set(words)):,} distinct)\n"
            f"  model2vec {old_s:7.3f} s   by words {new_s:7.3f} s   {old_s / new_s:5.1f}x"
            f"   max |difference| {float(np.abs(old - new).max()):.1e}"
        )


if __name__ == "__main__":
    main()
