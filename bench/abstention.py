"""Can the LLM-free mode tell when it has no answer? (issue 37 item 4, measurement only)

Runs `PoG.ask` in the LLM-free mode on the bundled movie KG (as `kgreason ask` does) for:
  answerable   MetaQA dev questions the bundled ranker was NOT trained on (it saw the first
               4,000 per hop): a calibration slice (choose a threshold) and a report slice
  out-of-KG    the 50 questions of tests/data/ownkg/out_of_kg.txt (no answer in the KG)
Brackets are removed from the MetaQA questions, so both kinds go through entity linking as
a user's unbracketed question does. Per question, candidate confidence signals:
  softmax      the answer's confidence today (softmax weight of the top path)
  align        the top path's word-to-hop alignment (align.py `align_assign`: relation texts
               matched one-to-one to the question's content words, over max(words, hops))
  link         the topic link's score (1.0 exact, lower fuzzy)
  align*link   their product
Prints AUROC of each signal against correctness (pooled: a wrong or out-of-KG answer is a
negative), a reliability table for the best, and, with the threshold that keeps 95 % of the
calibration slice's correct answers, the abstention rates on the report slice and on the
out-of-KG questions.

    python bench/abstention.py [--per-hop 100]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("KGREASON_SHARED_DATA") or ROOT.parent / "shared" / "data")
TRAINED_PER_HOP = 4000


def auroc(score: np.ndarray, label: np.ndarray) -> float:
    pos, neg = score[label], score[~label]
    if not len(pos) or not len(neg):
        return float("nan")
    ranks = np.argsort(np.argsort(np.concatenate([pos, neg]))) + 1
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def signals(pog, emb, question: str, gold: set[str] | None) -> dict:
    from kgreason.eval.metrics import normalize_answer
    from kgreason.pog.ranker.align import path_alignment, unit
    from kgreason.pog.ranker.features import path_keys

    r = pog.ask(question)
    conf = r.trace_record("ranker").get("confidence", 0.0)
    # an abstained question is scored on what it would have answered (its first candidate)
    shown = r.answers or (r.candidates if r.abstained else [])
    first = shown[0].name if shown else None
    ok = gold is not None and first is not None and normalize_answer(first) in gold
    align = 0.0
    if r.paths:  # the question's mentions as written (keyword), as the bench always used
        mentions = [t.keyword or t.name for t in r.topic_entities]
        got = path_alignment(
            question, mentions, path_keys(r.paths[0]), lambda t: unit(emb.embed(t))
        )
        align = got or 0.0
    link = min((t.score for t in r.topic_entities), default=0.0)
    return {"ok": ok, "softmax": conf, "align": align, "link": link, "align*link": align * link}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--per-hop", type=int, default=100, help="per hop, per slice")
    args = ap.parse_args(argv)

    import kgreason
    from kgreason.embed import build_embedder
    from kgreason.embed.settings import EmbedSettings
    from kgreason.eval.datasets import load
    from kgreason.eval.metrics import normalize_answer

    emb = build_embedder(EmbedSettings(backend="static"))
    own = ROOT / "tests" / "data" / "ownkg" / "out_of_kg.txt"
    ook = [ln for ln in own.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    rows: dict[str, list[dict]] = {"calibration": [], "report": [], "out-of-KG": []}
    n = args.per_hop
    with kgreason.PoG.from_settings() as pog:
        for h in (1, 2, 3):
            recs = load("metaqa", split="dev", hops=h, root=DATA).records[TRAINED_PER_HOP:]
            for part, sl in (("calibration", recs[:n]), ("report", recs[n : 2 * n])):
                for rec in sl:
                    gold = {normalize_answer(f) for a in rec.answers for f in a.surface_forms()}
                    q = rec.question.replace("[", "").replace("]", "")
                    rows[part].append({"hops": h, **signals(pog, emb, q, gold)})
        for q in ook:
            rows["out-of-KG"].append({"hops": 0, **signals(pog, emb, q, None)})

    pooled = rows["report"] + rows["out-of-KG"]
    label = np.array([r["ok"] for r in pooled])
    print(
        f"answerable (report slice): {len(rows['report'])}, Hits@1 {100 * label[: len(rows['report'])].mean():.1f}; out-of-KG: {len(rows['out-of-KG'])}"
    )
    names = ("softmax", "align", "link", "align*link")
    print("AUROC of confidence against correctness (report slice + out-of-KG pooled):")
    for k in names:
        print(f"  {k:<11} {auroc(np.array([r[k] for r in pooled]), label):.3f}")
    best = max(names, key=lambda k: auroc(np.array([r[k] for r in pooled]), label))
    s = np.array([r[best] for r in pooled])
    print(f"reliability of {best} (bins of equal count): signal range, n, accuracy")
    for chunk in np.array_split(np.argsort(s), 5):
        print(
            f"  {s[chunk].min():.3f}-{s[chunk].max():.3f}  {len(chunk):>4}  {100 * label[chunk].mean():5.1f}"
        )
    al_cal = np.array([r["align"] for r in rows["calibration"]])
    al_rep = np.array([r["align"] for r in rows["report"]])
    al_ook = np.array([r["align"] for r in rows["out-of-KG"]])
    print("align thresholds: abstaining on calibration / report slice / out-of-KG")
    for t in np.arange(0.06, 0.19, 0.02):
        print(
            f"  {t:.2f}  {100 * (al_cal < t).mean():5.1f}% / {100 * (al_rep < t).mean():5.1f}%"
            f" / {100 * (al_ook < t).mean():5.1f}%"
        )
    # the rule, on the calibration slice only (never on the out-of-KG or report questions):
    # the highest threshold on a 0.01 grid at which at most 4% of it abstains
    grid = np.round(np.arange(0.0, 0.5, 0.01), 2)
    t = max(float(x) for x in grid if (al_cal < x).mean() <= 0.04)
    print(
        f"rule (calibration abstains <= 4%): align < {t:.2f}: out-of-KG abstain "
        f"{100 * (al_ook < t).mean():.0f}%, report slice {100 * (al_rep < t).mean():.1f}%"
    )
    for k in names:
        cal_ok = np.array([r[k] for r in rows["calibration"] if r["ok"]])
        t = float(np.quantile(cal_ok, 0.05)) if len(cal_ok) else 0.0
        rep = np.array([r[k] for r in rows["report"]])
        rep_ok = np.array([r["ok"] for r in rows["report"]])
        oo = np.array([r[k] for r in rows["out-of-KG"]])
        print(
            f"threshold {k}={t:.3f} (keeps 95% of calibration's correct answers): abstains on "
            f"{100 * (oo < t).mean():.0f}% of out-of-KG, {100 * (rep < t).mean():.1f}% of "
            f"answerable ({100 * (rep[rep_ok] < t).mean():.1f}% of the correct ones)"
        )


if __name__ == "__main__":
    main()
