"""Does the zero-shot ranking's confidence mean something? (issue 37 item 4, for what
`pog.ranker = auto` uses on a KG no ranker was trained on)

Runs `PoG.ask` in the LLM-free mode, as `kgreason ask --kg STORE` does, on KGs the
zero-shot order-aligned ranking was not tuned on and on PathQuestion (its weights were
chosen on PQ questions 300-600, so the slices here avoid them):
  answerable  PQ-2H / PQ-3H / PQL-2H / PQL-3H (auto: the zero-shot default), MetaQA 1-3 hop
              on the bundled KG (`pog.ranker = order-aligned`: auto would use the bundled
              ranker there), the 12 company-KG questions (report only)
              a CHOOSE slice (questions 600.. per PQ file, MetaQA dev 4300..) to fit the
              confidence and the threshold, and a REPORT slice (questions 0.., MetaQA dev
              4000..) they are measured on
  out-of-KG   tests/data/ownkg/out_of_kg_company.txt (20, company KG) and
              pq_out_of_kg_templates.txt (25 templates x 2 people from PQ-2H, on its KB);
              any answer to them is wrong
Per question, the signals the product's zero-shot confidence reads (calibration.py's
`signals`, the same function, on the ranked paths the answer stage receives): `softmax`
(the top path's softmax weight: the confidence before calibration), `align` (its
word-to-hop alignment, what abstention reads), `top` (its score), `gap` (its lead over the
second path), `hops`; then `fit`, a logistic fit of them on the CHOOSE slice (printed as
calibration.py's ORDER_ALIGNED), and `product`, the confidence the product reported (the
same as `fit` once those constants are in). Prints AUROC against correctness (a wrong or
out-of-KG answer is negative) on REPORT + out-of-KG pooled, reliability tables, and
abstention at the product's threshold.

    python bench/zero_shot_calibration.py [--per-file 100] [--work /tmp/kgreason-loko]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ranker_bench as rb
from abstention import auroc
from ranker_loko import open_file_kg, questions

OWN = Path(__file__).resolve().parents[1] / "tests" / "data" / "ownkg"
PQ_FILES = ["PQ-2H", "PQ-3H", "PQL-2H", "PQL-3H"]
METAQA = ["MetaQA-1H", "MetaQA-2H", "MetaQA-3H"]
#: per file, where each slice starts (PQ weights were chosen on 300-600)
CHOOSE = {**dict.fromkeys(PQ_FILES, 600), **dict.fromkeys(METAQA, 4300)}
REPORT = {**dict.fromkeys(PQ_FILES, 0), **dict.fromkeys(METAQA, 4000)}


def _lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]


class Watch:
    """Wraps the answer stage to keep the ranked paths (and alignment) of the last question."""

    def __init__(self) -> None:
        import kgreason.pog.ranker.answer as answer

        self.module, self.orig = answer, answer.apply_answer
        self.ranked: list = []
        self.alignment: float | None = None
        answer.apply_answer = self._spy  # type: ignore[assignment]

    async def _spy(self, result, ranked, book, topics, **kw):
        self.ranked, self.alignment = list(ranked), kw.get("alignment")
        await self.orig(result, ranked, book, topics, **kw)

    def close(self) -> None:
        self.module.apply_answer = self.orig  # type: ignore[assignment]


def signals(r, watch: Watch) -> dict[str, float]:
    """The product's calibration signals (calibration.signals, the same function), and the
    confidence the product reported."""
    from kgreason.pog.ranker.calibration import signals as product_signals

    sig = product_signals(watch.ranked, watch.alignment)
    return {**sig, "product": float(r.trace_record("ranker").get("confidence", 0.0))}


def run_one(pog, watch: Watch, text: str, topics, gold: set[str] | None) -> dict:
    from kgreason.eval.metrics import normalize_answer

    watch.ranked, watch.alignment = [], None
    t0 = time.perf_counter()
    r = pog.ask(text, topics)
    ms = 1000 * (time.perf_counter() - t0)
    shown = r.answers or (r.candidates if r.abstained else [])
    first = shown[0].name if shown else None
    ok = gold is not None and first is not None and normalize_answer(first) in gold
    return {"ok": ok, "abstained": r.abstained, "ms": ms, **signals(r, watch)}


async def collect(args) -> dict[str, list[dict]]:
    import kgreason
    from kgreason.config import Settings
    from kgreason.embed.settings import EmbedSettings
    from kgreason.eval.metrics import normalize_answer
    from kgreason.pog.settings import PoGSettings

    rows: dict[str, list[dict]] = {"choose": [], "report": [], "out-of-KG": []}
    watch = Watch()
    try:
        for f in [*PQ_FILES, *METAQA, "company"]:
            kg = open_file_kg(f, args.work)
            ranker = "order-aligned" if f.startswith("MetaQA") else "auto"
            settings = Settings(
                embed=EmbedSettings(backend="static"), pog=PoGSettings(ranker=ranker)
            )
            pog = kgreason.PoG.from_settings(settings, kg=kg, llm_free=True)
            slices = {"report": (REPORT.get(f, 0), args.per_file)}
            if f in CHOOSE:
                slices["choose"] = (CHOOSE[f], args.per_file)
            for part, (lo, n) in slices.items():
                for q in await questions(kg, f, lo, lo + n):
                    gold = {normalize_answer(g) for g in q.gold}
                    row = run_one(pog, watch, q.text, list(q.topic_ids), gold)
                    rows[part].append({"file": f, **row})
            if f == "company":
                for text in _lines(OWN / "out_of_kg_company.txt"):
                    rows["out-of-KG"].append({"file": f, **run_one(pog, watch, text, None, None)})
            if f == "PQ-2H":
                people = [q for q in await questions(kg, f, 1000, 1400)][::8]
                names = list(dict.fromkeys(q.mentions[0] for q in people))
                for i, tpl in enumerate(_lines(OWN / "pq_out_of_kg_templates.txt")):
                    for who in names[2 * i : 2 * i + 2]:
                        ids = (await kg.search(who, limit=1, fuzzy=False))[0].id
                        row = run_one(pog, watch, tpl.format(who), [ids], None)
                        rows["out-of-KG"].append({"file": f, **row})
            print(f"  {f}: done", flush=True)
    finally:
        watch.close()
    return rows


def fit_logistic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(weights, mean, std): plain logistic regression by gradient descent (no sklearn)."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = (x - mu) / sd
    w = np.zeros(z.shape[1] + 1)
    zb = np.hstack([z, np.ones((len(z), 1))])
    for _ in range(5000):
        p = 1 / (1 + np.exp(-zb @ w))
        w -= 0.1 * (zb.T @ (p - y) / len(y) + 1e-3 * np.r_[w[:-1], 0])
    return w, mu, sd


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--per-file", type=int, default=100, help="questions per file and slice")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-loko"))
    ap.add_argument("--dump", type=Path, help="write every row's signals here (JSON)")
    args = ap.parse_args(argv)
    if not rb.PQ.is_dir():
        sys.exit(f"no PathQuestion at {rb.PQ} (set KGREASON_SHARED_DATA)")
    args.work.mkdir(parents=True, exist_ok=True)
    rows = asyncio.run(collect(args))
    if args.dump:
        args.dump.write_text(json.dumps(rows))

    from kgreason.pog.ranker.calibration import SIGNALS

    def mat(rs: list[dict]) -> np.ndarray:
        return np.array([[r[k] for k in SIGNALS] for r in rs], dtype=np.float64)

    ch = rows["choose"]
    w, mu, sd = fit_logistic(mat(ch), np.array([r["ok"] for r in ch], dtype=np.float64))
    print("logistic fit on the choose slice (calibration.py's ORDER_ALIGNED):")
    r4 = lambda v: tuple(round(float(x), 4) for x in v)  # noqa: E731
    print(f"  Calibration(weights={r4(w[:-1])}, bias={round(float(w[-1]), 4)}, "
          f"mean={r4(mu)}, std={r4(sd)})")  # fmt: skip
    for part in rows.values():
        for r in part:
            z = (np.array([r[k] for k in SIGNALS]) - mu) / sd
            r["fit"] = float(1 / (1 + np.exp(-(z @ w[:-1] + w[-1]))))
    report, ook = rows["report"], rows["out-of-KG"]
    pooled = report + ook
    label = np.array([r["ok"] for r in pooled])
    print(f"\nreport slice: {len(report)} answerable, Hits@1 "
          f"{100 * np.mean([r['ok'] for r in report]):.1f}; out-of-KG: {len(ook)}")  # fmt: skip
    for f in dict.fromkeys(r["file"] for r in report):
        sel = [r for r in report if r["file"] == f]
        print(f"  {f:<10} n={len(sel):>4}  Hits@1 {100 * np.mean([r['ok'] for r in sel]):5.1f}  "
              f"abstained {100 * np.mean([r['abstained'] for r in sel]):5.1f}%  "
              f"median {np.median([r['ms'] for r in sel]):6.1f} ms/question")  # fmt: skip
    print("AUROC against correctness (report slice + out-of-KG pooled; choose slice separate):")
    for k in (*SIGNALS, "fit", "product"):
        a = auroc(np.array([r[k] for r in pooled]), label)
        c = auroc(np.array([r[k] for r in ch]), np.array([r["ok"] for r in ch]))
        print(f"  {k:<8} {a:.3f}   (choose slice {c:.3f})")
    for k in ("softmax", "product"):
        s = np.array([r[k] for r in pooled])
        print(f"reliability of {k} (report + out-of-KG, 5 bins of equal count): range, n, "
              "mean signal, accuracy")  # fmt: skip
        for chunk in np.array_split(np.argsort(s), 5):
            print(f"  {s[chunk].min():.3f}-{s[chunk].max():.3f}  {len(chunk):>4}  "
                  f"{s[chunk].mean():.3f}  {100 * label[chunk].mean():5.1f}")  # fmt: skip
    ab = np.array([r["abstained"] for r in ook])
    ab_rep = np.array([r["abstained"] for r in report])
    print(f"abstention at the product's threshold: out-of-KG {100 * ab.mean():.0f}%, "
          f"answerable {100 * ab_rep.mean():.1f}%")  # fmt: skip
    for k in ("align", "fit"):
        cal_ok = np.array([r[k] for r in ch if r["ok"]])
        t = float(np.quantile(cal_ok, 0.05))
        oo = np.array([r[k] for r in ook])
        rep = np.array([r[k] for r in report])
        print(f"threshold {k} < {t:.3f} (keeps 95% of the choose slice's correct answers): "
              f"abstains on {100 * (oo < t).mean():.0f}% of out-of-KG, "
              f"{100 * (rep < t).mean():.1f}% of answerable")  # fmt: skip


if __name__ == "__main__":
    main()
