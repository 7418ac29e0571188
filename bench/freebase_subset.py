"""`kg subset` for a generated question set, and `kgreason eval --method llm-free` on the
subset against the full store: the answers must be the same for every question (a walk a
bound cut is replayed from the one the full store made; the table counts those apart).

    python bench/freebase_subset.py --dump /tmp/fb-2M.gz --questions 200 --hops 2

Everything runs as the user runs it: fresh `kgreason` processes, timed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import freebase_dump


def kgreason(*args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "kgreason", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if res.returncode != 0:
        raise SystemExit(f"kgreason {' '.join(args)} failed:\n{res.stderr[-3000:]}")
    return time.perf_counter() - t0, res.stdout


def answers(run: Path) -> dict[str, tuple[list[str], bool]]:
    out = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        out[row["id"]] = (row.get("answer_ids") or [], bool(row.get("extra", {}).get("abstained")))
    return out


def _truncated(run: Path) -> set[str]:
    rows = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    return {r["id"] for r in rows if (r.get("extra") or {}).get("subgraph", {}).get("truncated")}


def _mb(path: Path, pattern: str = "*") -> str:
    return f"{sum(f.stat().st_size for f in path.resolve().glob(pattern)) / 1e6:,.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dump", type=Path, required=True)
    ap.add_argument("--store", type=Path, help="the store built from --dump (else built here)")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--hops", type=int, default=2)
    ap.add_argument("--embedder", default="static")
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument(
        "--cap",
        default=None,
        help="pog.max_subgraph_triples for both subset and eval (none: no cap)",
    )
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        d = Path(tmp)
        if a.store:
            (d / "full").symlink_to(a.store.resolve())
            build_s = float("nan")
        else:
            build_s, _ = kgreason("kg", "build", str(a.dump), "--out", str(d / "full"), "--no-warm")
        data = d / "data" / "kgqa" / "freebase-questions" / "aog"
        data.mkdir(parents=True)
        freebase_dump.questions(d / "full", data / "WebQSP.json", a.questions, seed=1)
        env = {"KGREASON_POG__D_MAX": str(a.hops)}  # eval walks as deep as the subset was cut
        if a.cap:
            env["KGREASON_POG__MAX_SUBGRAPH_TRIPLES"] = a.cap
        sub_s, out = kgreason(
            "kg",
            "subset",
            str(d / "full"),
            "--dataset",
            "webqsp",
            "--questions",
            str(data / "WebQSP.json"),
            "--hops",
            str(a.hops),
            "--out",
            str(d / "sub"),
            "--json",
            env=env,
        )
        report = json.loads(out)
        _, info = kgreason("kg", "info", str(d / "full"), "--json")
        full_counts = json.loads(info)["counts"]
        runs = {}
        for name in ("full", "sub"):
            secs, _ = kgreason(
                "eval",
                "webqsp",
                "--data-dir",
                str(d / "data"),
                "--kg",
                str(d / name),
                "--method",
                "llm-free",
                "--embedder",
                a.embedder,
                "--out",
                str(d / f"run-{name}"),
                env=env,
            )
            runs[name] = (secs, answers(d / f"run-{name}"))
        full, sub = runs["full"][1], runs["sub"][1]
        same = sum(full[q] == sub.get(q) for q in full)
        cut_ids = _truncated(d / "run-full")
        same_cut = sum(full[q] == sub.get(q) for q in full if q in cut_ids)
        print(
            f"dump {a.dump.name}: store {full_counts['triples']:,} triples, built in {build_s:.1f} s"
        )
        print(
            f"kg subset, {report['questions']} questions, --hops {a.hops}: {report['triples']:,} "
            f"triples, {report['entities']:,} entities in {sub_s:.1f} s (wall, fresh process); "
            f"{report['truncated']} questions cut by a bound; on disk {_mb(d / 'sub')} MB, of "
            f"which the recorded walks {_mb(d / 'sub', 'walks.*')} MB (full store "
            f"{_mb(d / 'full')} MB)"
        )
        for h in range(1, a.hops + 1):
            print(
                f"  gold inside within {h} hop(s): {report['gold_inside'].get(str(h), 0)} "
                f"(every gold answer: {report['gold_all_inside'].get(str(h), 0)}) "
                f"of {report['with_gold_ids']}"
            )
        print(
            f"eval llm-free ({a.embedder}): full store {runs['full'][0]:.1f} s, subset "
            f"{runs['sub'][0]:.1f} s; identical answers for {same} of {len(full)} questions; "
            f"{same_cut} of the {len(cut_ids)} whose walk a bound cut"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
