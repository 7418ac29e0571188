"""What a user of an unfamiliar KG gets (issue 37): `PoG.ask` in the LLM-free mode with the
default settings, as `kgreason ask --kg STORE` runs it, on KGs no ranker was trained on.

  PathQuestion  PQ-2H / PQ-3H / PQL-2H / PQL-3H over their own KBs, questions lo..hi of
                each file (pog.ranker = auto: the zero-shot order-aligned ranking)
  MetaQA        dev questions 4600.. per hop on the bundled KG with pog.ranker =
                order-aligned (auto would use the bundled ranker there; this slice was used
                by no fit, threshold or weight choice)
  company       the 12 questions of tests/data/ownkg

Each set runs twice: with `pog.revisit_when_empty` as the default leaves it ("auto": on for
a zero-shot ranking) and "off" (the paper's paths: never the topic again, no immediate
backtracking). PathQuestion questions are split by whether their gold chain (the file's
third column) visits an entity twice ("[X]'s parent's child" when X is the only child):
such chains cannot be found with revisits off. Prints Hits@1 (the first answer, or the
first candidate of an abstained question, in the gold set), abstention and the median
time per question.

    python bench/zero_shot_answers.py [--lo 0] [--hi 300] [--work /tmp/kgreason-loko]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ranker_bench as rb
from ranker_loko import open_file_kg, questions

PQ_FILES = ["PQ-2H", "PQ-3H", "PQL-2H", "PQL-3H"]
METAQA = ["MetaQA-1H", "MetaQA-2H", "MetaQA-3H"]
METAQA_FROM = 4600


def revisiting(name: str) -> dict[str, bool]:
    """Question text -> whether its gold chain visits an entity twice."""
    out: dict[str, bool] = {}
    for ln in (rb.PQ / "PathQuestion" / f"{name}.txt").read_text().splitlines():
        parts = ln.split("\t")
        if len(parts) == 3:
            ents = [x for x in parts[2].split("#") if x != "<end>"][0::2]
            out.setdefault(parts[0].strip(), len(set(ents)) < len(ents))
    return out


async def run(name: str, args, revisit: str) -> dict:
    import kgreason
    from kgreason.config import Settings
    from kgreason.embed.settings import EmbedSettings
    from kgreason.eval.metrics import normalize_answer
    from kgreason.pog.settings import PoGSettings

    kg = open_file_kg(name, args.work)
    ranker = "order-aligned" if name.startswith("MetaQA") else "auto"
    settings = Settings(
        embed=EmbedSettings(backend="static"),
        pog=PoGSettings(ranker=ranker, revisit_when_empty=revisit),
    )
    pog = kgreason.PoG.from_settings(settings, kg=kg, llm_free=True)
    lo, hi = (
        (METAQA_FROM, METAQA_FROM + args.hi - args.lo) if ranker != "auto" else (args.lo, args.hi)
    )
    chains = revisiting(name) if name in PQ_FILES else {}
    ok, abstained, twice, ms = [], [], [], []
    for q in await questions(kg, name, lo, hi):
        t0 = time.perf_counter()
        r = pog.ask(q.text, list(q.topic_ids))
        ms.append(1000 * (time.perf_counter() - t0))
        shown = r.answers or (r.candidates if r.abstained else [])
        gold = {normalize_answer(g) for g in q.gold}
        ok.append(bool(shown) and normalize_answer(shown[0].name) in gold)
        abstained.append(r.abstained or not r.answers)
        twice.append(chains.get(q.text.strip(), False))
    return {
        "ok": np.array(ok),
        "abstained": np.array(abstained),
        "twice": np.array(twice),
        "ms": float(np.median(ms)) if ms else 0.0,
    }


def pct(x: np.ndarray) -> str:
    return f"{100 * x.mean():5.1f}" if len(x) else "    -"


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lo", type=int, default=0)
    ap.add_argument("--hi", type=int, default=300)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-loko"))
    ap.add_argument("--files", default=",".join([*PQ_FILES, *METAQA, "company"]))
    args = ap.parse_args(argv)
    if not rb.PQ.is_dir():
        sys.exit(f"no PathQuestion at {rb.PQ} (set KGREASON_SHARED_DATA)")
    args.work.mkdir(parents=True, exist_ok=True)
    print("file        revisit   n   Hits@1 | simple chains: n Hits@1 | revisiting: n Hits@1 "
          "| abstained  median ms")  # fmt: skip
    for name in args.files.split(","):
        for revisit in ("auto", "off"):
            got = await run(name, args, revisit)
            ok, tw = got["ok"], got["twice"]
            print(f"{name:<10}  {revisit:<5} {len(ok):>5}  {pct(ok)} | {(~tw).sum():>14} "
                  f"{pct(ok[~tw])} | {tw.sum():>12} {pct(ok[tw])} | {pct(got['abstained'])}%"
                  f"  {got['ms']:9.1f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
