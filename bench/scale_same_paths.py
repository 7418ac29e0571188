"""Whether two code versions give the same paths on the scale questions (issue 15).

    python bench/scale_same_paths.py --baseline-src /path/to/old/checkout/src [--topics 2]

Why: bench/pog_scale_ab.py times old and new code interleaved but compares only the number
of paths. Here both versions (the old one imported as `kgreason_old`, as there) answer each
question in one process, and a digest of every path's `path_signature` (relations,
directions and entity sets by name), the expansion count and whether a bound was hit is
compared. The bound-reason text is counted apart, since a change may reword it on purpose.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pog_scale_ab import renamed_copy, version


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline-src", type=Path, required=True, help="the old checkout's src")
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-scale"))
    ap.add_argument("--topics", type=int, default=0, help="only questions with this many")
    args = ap.parse_args()
    d = args.work / f"n{args.size}-s0"
    qs = json.loads((d / "questions.json").read_text())
    if args.topics:
        qs = [q for q in qs if len(q["topics"]) == args.topics]
    with tempfile.TemporaryDirectory(prefix="kgreason-same-") as tmp:
        renamed_copy(args.baseline_src, Path(tmp))
        sys.path.insert(0, tmp)
        runs = {pkg: version(pkg, d / "store") for pkg in ("kgreason_old", "kgreason")}
        sig = {pkg: importlib.import_module(f"{pkg}.pog.paths").path_signature for pkg in runs}
        same = reworded = 0
        for q in qs:
            got = {}
            for pkg, (sync, run) in runs.items():
                _, _, (_, search) = sync(run(q))
                h = hashlib.sha256()
                for p in search.paths:
                    h.update(repr(sig[pkg](p)).encode())
                got[pkg] = (h.hexdigest(), search.expansions, search.bound_hit, search.bound_reason)
            old, new = got["kgreason_old"], got["kgreason"]
            same += old[:3] == new[:3]
            reworded += old[3] != new[3]
    print(
        f"same paths, expansions and bound hit: {same}/{len(qs)};"
        f" bound reason worded differently: {reworded}/{len(qs)}"
    )


if __name__ == "__main__":
    main()
