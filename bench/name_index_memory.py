"""Peak RSS and time of the name-index step alone (`write_name_indexes`), as the dump
build calls it, on N synthetic labels.

    python bench/name_index_memory.py --sizes 5M,20M --memory 256M

For each size it writes N labels once (cached in --dir) as a dump build's labels stage
leaves them: `labels.len` and `labels.blob` run files. A fresh child process then runs the
step on them the way `kgreason.kg.freebase.build._finish` does (the key hashes and the
labels read from files, a block at a time) and prints its wall and CPU time (user +
system: less sensitive to other processes on the machine), its peak RSS (VmHWM) and
its peak just before the step (imports and inputs). Names: 1-4 words from
a 200,000-word vocabulary in five scripts, so that there are duplicates, names equal
after normalisation, empty names and long shared 16-byte prefixes, as in the dump.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kgreason.kg.store import runs


def size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 10**3, "M": 10**6, "G": 2**30}.get(text[-1:], 1)
    return int(float(text.rstrip("KMG")) * scale)


def make_labels(work: Path, n: int, seed: int = 7) -> None:
    """labels.len.npy.raw / labels.blob.npy.raw, and keys.S (as the dump build's)."""
    from kgreason.kg.freebase.parse import KEY

    done = work / "done"
    if done.exists():
        return
    work.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    alphabets = ["abcdefghijklmnopqrstuvwxyz", "абвгдежзиклмнопрст", "αβγδεζηθικλμνξ", "éèüöäßç"]
    vocab = []
    for _ in range(200_000):
        letters = alphabets[int(rng.integers(0, 4)) if rng.random() < 0.2 else 0]
        k = int(rng.integers(2, 11))
        vocab.append("".join(rng.choice(list(letters), k)).capitalize())
    vocab += ["University of", "List of", "The", "Saint", "日本", ""]
    lens = runs.NpyRaw(work / "labels.len.npy", np.int64)
    blob = runs.NpyRaw(work / "labels.blob.npy", np.uint8)
    for r in (lens, blob):
        r.raw.unlink(missing_ok=True)
        r.start()
    keys = work / "keys.S"
    keys.unlink(missing_ok=True)
    step = 1 << 20
    for a in range(0, n, step):
        m = min(step, n - a)
        words = rng.integers(0, len(vocab), (m, 4))
        words[:, :1] = np.where(rng.random((m, 1)) < 0.05, len(vocab) - 5, words[:, :1])
        count = rng.integers(1, 5, m)
        enc = [
            " ".join(vocab[w] for w in row[:c]).encode()
            for row, c in zip(words.tolist(), count.tolist(), strict=True)
        ]
        lens.append(np.fromiter(map(len, enc), np.int64, m))
        runs.append_bytes(blob.raw, b"".join(enc))
        runs.append(keys, np.array([f"m.{i:x}".encode() for i in range(a, a + m)], dtype=KEY))
    done.write_text(str(n))


def _vm(field: str) -> int:
    """A /proc/self/status figure in bytes. VmHWM, not ru_maxrss: Linux carries a
    parent's peak into a child's ru_maxrss across fork and exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise SystemExit(f"no {field} in /proc/self/status")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def step(work: Path, memory: int) -> dict[str, float]:
    """One run of the name-index step in this (fresh) process."""
    from kgreason.kg.freebase import build

    n = int((work / "done").read_text())
    run = work / "run"  # hard links: the step may move its inputs into the store
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir()
    for name in ("labels.len.npy.raw", "labels.blob.npy.raw", "keys.S"):
        os.link(work / name, run / name)
    store = run / "store"
    store.mkdir()
    before = _vm("VmHWM")
    t0, c0 = time.perf_counter(), _cpu()
    if hasattr(build, "_label_file"):  # the external version
        labels = build._label_file(run, store)
        hashes = build._key_hashes(run, n)
        build.write_name_indexes(store, None, labels, True, key_hashes=hashes, memory=memory)
    else:
        labels = build._label_table(run)
        hashes = build._key_hashes(run, n)
        build.write_name_indexes(store, None, labels, True, key_hashes=hashes)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    peak = _vm("VmHWM")
    digest = hashlib.sha256()
    for p in sorted(store.iterdir()):  # the same files before and after a change
        digest.update(p.name.encode() + b"\0")
        with open(p, "rb") as f:
            while chunk := f.read(1 << 22):
                digest.update(chunk)
    files = len(list(store.iterdir()))
    shutil.rmtree(run, ignore_errors=True)
    return {
        "n": n,
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_rss": peak,
        "rss_before": before,
        "files": files,
        "sha": digest.hexdigest()[:16],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="5M,20M")
    ap.add_argument("--memory", default="256M", help="the build's budget (external version)")
    ap.add_argument("--dir", default="/tmp/kgreason-name-bench")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(step(Path(args.one), size(args.memory))))
        return 0
    for text in args.sizes.split(","):
        n = size(text)
        work = Path(args.dir) / f"n{n}"
        make_labels(work, n)
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(work), "--memory", args.memory],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"{n:>12,} labels  step {r['wall_s']:7.1f} s (cpu {r['cpu_s']:.1f} s)  peak RSS {r['peak_rss'] / 2**20:8.0f} MB"
            f"  (before the step {r['rss_before'] / 2**20:.0f} MB)  budget {args.memory}"
            f"  {r['files']} files sha {r['sha']}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
