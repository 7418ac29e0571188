"""A digest of every LLM-free answer on MetaQA dev, through the public API only, so two code
versions (or layouts) can be shown to answer every question identically.

    python bench/llm_free_digest.py --out new.jsonl [--hops 1,2,3] [--limit N] [--shard i/n]
    python bench/llm_free_digest.py --compare old.jsonl new.jsonl

Each question runs `kgreason.PoG(...).ask` in LLM-free mode on the bundled MetaQA KG (the
default settings, the bundled ranker), and its result's `to_dict()` without the timings,
trace and usage (which hold times) is hashed; one JSON line per question holds the digest
and the answers. Run with `PYTHONPATH=OTHER_CHECKOUT/src` for another version: only
`kgreason.PoG`, `kgreason.Settings` and `PoGResult.to_dict()` are used. `--shard i/n`
takes every n-th question from the i-th, so n processes cover one set between them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

#: result fields that hold times, not answers
VOLATILE = ("timings_s", "trace", "usage")


def questions(hops: list[int], limit: int | None) -> list[tuple[str, str]]:
    env = os.environ.get("KGREASON_SHARED_DATA")
    shared = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"
    out = []
    for h in hops:
        with (shared / "kgqa" / "metaqa" / f"{h}-hop" / "dev.txt").open(encoding="utf-8") as f:
            for i, line in enumerate(f):
                if limit is not None and i >= limit:
                    break
                out.append((f"{h}-{i}", line.split("\t")[0]))
    return out


def digest(data: dict) -> str:
    kept = {k: v for k, v in data.items() if k not in VOLATILE}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()


def run(args: argparse.Namespace) -> None:
    import kgreason

    qs = questions([int(h) for h in args.hops.split(",")], args.limit)
    i, n = (int(x) for x in args.shard.split("/"))
    qs = qs[i::n]
    t0 = time.perf_counter()
    with (
        kgreason.PoG.from_settings(kgreason.Settings(), llm_free=True) as pog,
        open(args.out, "w", encoding="utf-8") as out,
    ):
        for k, (qid, q) in enumerate(qs, 1):
            data = pog.ask(q).to_dict()
            answers = [a.get("name") for a in data.get("answers") or []]
            out.write(json.dumps({"id": qid, "digest": digest(data), "answers": answers}) + "\n")
            if k % 1000 == 0:
                print(f"{k}/{len(qs)} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(f"{len(qs)} questions in {time.perf_counter() - t0:.0f} s -> {args.out}")


def compare(old: Path, new: Path) -> None:
    def load(p: Path) -> dict[str, dict]:
        rows: dict[str, dict] = {}
        for f in sorted(p.parent.glob(p.name)):
            for line in f.open(encoding="utf-8"):
                r = json.loads(line)
                rows[r["id"]] = r
        return rows

    a, b = load(old), load(new)
    common = sorted(set(a) & set(b))
    same = sum(a[k]["digest"] == b[k]["digest"] for k in common)
    answers = sum(a[k]["answers"] == b[k]["answers"] for k in common)
    print(
        f"{len(common)} questions in both ({len(a)} old, {len(b)} new): identical results "
        f"{same}/{len(common)}, identical answers {answers}/{len(common)}"
    )
    for k in [k for k in common if a[k]["digest"] != b[k]["digest"]][:10]:
        print(f"  differs: {k}: {a[k]['answers'][:3]} -> {b[k]['answers'][:3]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--hops", default="1,2,3")
    ap.add_argument("--limit", type=int, default=None, help="first N questions per hop")
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare)
    elif args.out:
        run(args)
    else:
        ap.error("give --out or --compare")


if __name__ == "__main__":
    main()
