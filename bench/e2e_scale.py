"""What the user waits for on a large KG: a fresh `kgreason ask --json`, a warm `POST /v1/ask`,
and the in-process stage totals beside them.

    python bench/e2e_scale.py --sizes 1000000,10000000 [--work /tmp/kgreason-scale]
    python bench/e2e_scale.py --sizes 10000000 --single 12 --multi 6 --hubs 3 --passes 2

Per size: the generated skewed KG and its questions (bench/pog_scale.py's `prepare`, cached
in --work), then
- **cold start**: one fresh process that imports kgreason, opens the store (`PoG.from_settings`)
  and asks the first question twice, each step timed: the costs a CLI pays before its answer;
- **CLI**: per question a fresh `kgreason ask --kg STORE --topic T... --embedder static --json`
  process: wall time, peak RSS (the child's ru_maxrss, read by a small launcher: see
  LAUNCH), reply bytes, its `timings_s.total`;
- **server**: one `kgreason serve --llm-free --embedder static`, warmed by one question, then
  every question `--passes` times over one keep-alive connection: wall time, reply bytes;
- **in process**: `PoG.ask` per question in this process (warm), its `timings_s.total` against
  the sum of the stages it printed, and the wall of ask + to_dict + json.dumps.

Before them, the one-time compile of the graph kernels that `kgreason kg build` pays for a
store of 1M+ triples (`kgreason.heap.warm_built_store`, in a fresh process): the store here
is built in process, so without this step the first CLI question of each kind would pay it
(9.5 s in a fresh venv) and be timed as a question.

Questions: the first --single single-topic ones of which --hubs start at a hub (top 1 % by
degree), and the first --multi two-topic ones, in the generated order (seed 0).
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pog_scale import prepare
from scale_fuzzy import question_text

KGREASON = [sys.executable, "-m", "kgreason"]


def pick(qs: list[dict], single: int, multi: int, hubs: int) -> list[dict]:
    one = [q for q in qs if len(q["topics"]) == 1]
    hub = [q for q in one if q["hub"]][:hubs]
    rest = [q for q in one if not q["hub"]][: single - len(hub)]
    two = [q for q in qs if len(q["topics"]) > 1][:multi]
    return [*hub, *rest, *two]


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]


def fig(xs: list[float], unit: str = "ms", scale: float = 1000.0) -> str:
    if not xs:
        return "-"
    vals = [statistics.median(xs) * scale, p95(xs) * scale, max(xs) * scale]
    nd = 2 if max(vals) < 10 else (1 if max(vals) < 100 else 0)
    return " / ".join(f"{v:.{nd}f}" for v in vals) + f" {unit}"


COLD = """
import json, sys, time
t0 = time.perf_counter()
import kgreason, kgreason.cli  # what `kgreason ask` imports before it opens anything
t1 = time.perf_counter()
s = kgreason.Settings.model_validate({"kg": {"store": sys.argv[1]}, "embed": {"backend": "static"}})
pog = kgreason.PoG.from_settings(s, llm_free=True)
t2 = time.perf_counter()
q, topics = sys.argv[2], sys.argv[3:]
r = pog.ask(q, topics)
t3 = time.perf_counter()
json.dumps(r.to_dict(), default=str)
t4 = time.perf_counter()
pog.ask(q, topics)
t5 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "open": t2 - t1, "first ask": t3 - t2,
                  "first to_dict+json": t4 - t3, "second ask": t5 - t4,
                  "first ask stages": r.timings_s}))
"""


def cold_start(store: Path, q: dict) -> dict:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    start = time.perf_counter() - t0
    out = subprocess.run(
        [sys.executable, "-c", COLD, str(store), question_text(q), *q["topics"]],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {"python start": start, **json.loads(out.stdout.strip().splitlines()[-1])}


#: runs a command as its grandchild and reports that process's wall time and peak RSS on a
#: last stderr line. Why not wait4 on our own child: Linux carries the forking process's
#: resident size into its child's ru_maxrss (the forked copy of this process, which holds
#: the generated KG, is the exec'd program's "old mm"), so a child of a 1.2 GB bench
#: reported 1206 MB for every `kgreason ask`; the launcher forks from a ~10 MB interpreter.
LAUNCH = """
import os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
sys.stderr.write(f"\\nLAUNCH {wall} {usage.ru_maxrss}\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def launched(cmd: list[str]) -> tuple[bytes, bytes, int, float, float]:
    """(stdout, stderr, exit code, wall seconds, peak RSS in MB) of `cmd` run through
    LAUNCH."""
    with tempfile.TemporaryFile() as errf:
        p = subprocess.run(
            [sys.executable, "-c", LAUNCH, *cmd], stdout=subprocess.PIPE, stderr=errf
        )
        errf.seek(0)
        err = errf.read()
    head, _, last = err.rstrip().rpartition(b"\n")
    _, wall, rss_kb = last.split()
    return p.stdout, head, p.returncode, float(wall), int(rss_kb) / 1024


def one_time_compile(store: Path) -> dict:
    """What `kgreason kg build` does last for a store of this size (warm_built_store), in a
    fresh process: "compiled" (and how long), or "cached"/"small"/"numpy"."""
    code = (
        "import sys, time; from pathlib import Path; "
        "from kgreason.kg.store.format import Manifest; "
        "from kgreason.heap import warm_built_store; "
        "n = int(Manifest.read(Path(sys.argv[1])).counts['triples']); t = time.perf_counter(); "
        "r = warm_built_store(n); print(r, time.perf_counter() - t)"
    )
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, str(store)], capture_output=True, text=True, check=True
    )
    what, secs = out.stdout.split()
    return {"kernels": what, "compile s": float(secs), "process s": time.perf_counter() - t0}


def cli_ask(store: Path, q: dict) -> dict:
    cmd = [*KGREASON, "ask", "--kg", str(store), "--embedder", "static", "--json"]
    for t in q["topics"]:
        cmd += ["--topic", t]
    cmd.append(question_text(q))
    out, err, rc, wall, rss = launched(cmd)
    try:
        data = json.loads(out)
    except json.JSONDecodeError:
        data = {}
    return {
        "wall": wall,
        "rss_mb": rss,
        "bytes": len(out),
        "total": (data.get("timings_s") or {}).get("total"),
        "rc": rc,
        "err": err.decode(errors="replace")[-300:] if rc else "",
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, store: Path):
        self.port = free_port()
        cmd = [*KGREASON, "serve", "--kg", str(store), "--embedder", "static", "--llm-free",
               "--port", str(self.port), "--deadline", "120"]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 300:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/healthz")
                if c.getresponse().status == 200:
                    break
            except OSError:
                time.sleep(0.2)
        else:
            raise RuntimeError("the server did not come up")
        self.started_s = time.monotonic() - t0
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)

    def ask(self, q: dict) -> dict:
        body = json.dumps({"question": question_text(q), "topics": q["topics"]})
        t0 = time.perf_counter()
        self.conn.request("POST", "/v1/ask", body, {"Content-Type": "application/json"})
        resp = self.conn.getresponse()
        raw = resp.read()
        wall = time.perf_counter() - t0
        data = json.loads(raw) if resp.status == 200 else {}
        return {
            "wall": wall,
            "bytes": len(raw),
            "status": resp.status,
            "elapsed": (data.get("elapsed_ms") or 0) / 1000,
            "total": (data.get("timings_s") or {}).get("total"),
            "stages": data.get("timings_s") or {},
        }

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def in_process(store: Path, qs: list[dict]) -> list[dict]:
    import kgreason

    s = kgreason.Settings.model_validate(
        {"kg": {"store": str(store)}, "embed": {"backend": "static"}}
    )
    out = []
    with kgreason.PoG.from_settings(s, llm_free=True) as pog:
        pog.ask(question_text(qs[0]), qs[0]["topics"])  # warm
        for q in qs:
            t0 = time.perf_counter()
            r = pog.ask(question_text(q), q["topics"])
            t1 = time.perf_counter()
            js = json.dumps(r.to_dict(), default=str)
            t2 = time.perf_counter()
            stages = {k: v for k, v in r.timings_s.items() if k != "total"}
            out.append(
                {
                    "ask": t1 - t0,
                    "serialise": t2 - t1,
                    "total": r.timings_s.get("total", 0.0),
                    "sum": sum(stages.values()),
                    "stages": stages,
                    "bytes": len(js),
                    "answers": len(r.answers),
                }
            )
    return out


def report(
    n: int,
    qs: list[dict],
    compiled: dict,
    cold: dict,
    cli: list[dict],
    srv: list[list[dict]],
    inp: list[dict],
    started: float,
) -> None:
    kinds = {"single-topic": [i for i, q in enumerate(qs) if len(q["topics"]) == 1],
             "two-topic": [i for i, q in enumerate(qs) if len(q["topics"]) > 1]}  # fmt: skip
    print(f"\n## {n:,} triples: {len(qs)} questions ({sum(q['hub'] for q in qs)} at hubs)")
    print(
        f"\none-time kernel compile (what `kgreason kg build` pays last): {compiled['kernels']}, "
        f"{compiled['compile s']:.1f} s ({compiled['process s']:.1f} s with its process)"
    )
    print("cold start (one fresh process, seconds): " + ", ".join(
        f"{k} {v:.3f}" for k, v in cold.items() if isinstance(v, float)))  # fmt: skip
    print(f"server start to /healthz: {started:.1f} s")
    print("\n| p50 / p95 / max | " + " | ".join(kinds) + " |")
    print("|---|" + "---|" * len(kinds))

    def line(label: str, f) -> None:
        print(f"| {label} | " + " | ".join(f(ix) for ix in kinds.values()) + " |")

    line(
        "`kgreason ask --json`, fresh process: wall",
        lambda ix: fig([cli[i]["wall"] for i in ix], "s", 1.0),
    )
    line("  its peak RSS (MB)", lambda ix: fig([cli[i]["rss_mb"] for i in ix], "MB", 1.0))
    line("  its `timings_s.total`", lambda ix: fig([cli[i]["total"] or 0.0 for i in ix]))
    line("  its stdout", lambda ix: fig([cli[i]["bytes"] for i in ix], "kB", 1e-3))
    every = [(i, r) for pas in srv for i, r in enumerate(pas)]
    line("warm `POST /v1/ask`: wall", lambda ix: fig([r["wall"] for i, r in every if i in ix]))
    line("  its `elapsed_ms`", lambda ix: fig([r["elapsed"] for i, r in every if i in ix]))
    line("  reply size", lambda ix: fig([r["bytes"] for i, r in every if i in ix], "kB", 1e-3))
    line("in process: `PoG.ask`", lambda ix: fig([inp[i]["ask"] for i in ix]))
    line("  `timings_s.total`", lambda ix: fig([inp[i]["total"] for i in ix]))
    line("  sum of the stages printed", lambda ix: fig([inp[i]["sum"] for i in ix]))
    line("  to_dict + json.dumps", lambda ix: fig([inp[i]["serialise"] for i in ix]))
    worst = max(abs(r["total"] - r["sum"]) / r["total"] for r in inp if r["total"])
    print(f"\nlargest gap between timings_s.total and its stages' sum: {worst * 100:.2f} %")
    over = sum(r["bytes"] > 1_000_000 for pas in srv for r in pas)
    bad = [r for r in cli if r["rc"]] + [r for pas in srv for r in pas if r["status"] != 200]
    print(f"replies over 1 MB: {over}; failed requests: {len(bad)}")
    for r in bad[:3]:
        print("  ", r)
    for kind, ix in kinds.items():
        i, r = max(((i, r) for i, r in every if i in ix), key=lambda x: x[1]["wall"])
        st = {k: v for k, v in r["stages"].items() if k != "total"}
        print(f"slowest warm reply, {kind} ({'hub' if qs[i]['hub'] else 'not a hub'}): wall "
              f"{r['wall'] * 1000:.0f} ms, timings_s.total {(r['total'] or 0) * 1000:.0f} ms: "
              + ", ".join(f"{k} {v * 1000:.0f}" for k, v in sorted(st.items(), key=lambda kv: -kv[1])[:6]) + " ms")  # fmt: skip
    slow = max(range(len(qs)), key=lambda i: inp[i]["total"])
    st = inp[slow]["stages"]
    print(f"slowest in process ({qs[slow]['topics']}, {'hub' if qs[slow]['hub'] else 'not a hub'}): "
          + ", ".join(f"{k} {v * 1000:.0f}" for k, v in sorted(st.items(), key=lambda kv: -kv[1])[:8]) + " ms")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kgreason-scale"))
    ap.add_argument("--single", type=int, default=12)
    ap.add_argument("--multi", type=int, default=6)
    ap.add_argument("--hubs", type=int, default=3)
    ap.add_argument("--passes", type=int, default=2)
    args = ap.parse_args()
    for n in (int(x) for x in args.sizes.split(",")):
        d = prepare(n, 0, args.work, sparql=False)
        store = d / "store"
        qs = pick(
            json.loads((d / "questions.json").read_text()), args.single, args.multi, args.hubs
        )
        compiled = one_time_compile(store)
        cold = cold_start(store, qs[0])
        cli = [cli_ask(store, q) for q in qs]
        server = Server(store)
        try:
            server.ask(qs[0])  # warm
            srv = [[server.ask(q) for q in qs] for _ in range(args.passes)]
        finally:
            server.close()
        inp = in_process(store, qs)
        report(n, qs, compiled, cold, cli, srv, inp, server.started_s)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
