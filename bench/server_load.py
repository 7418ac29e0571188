"""Warm server against the cold CLI, LLM-free, on the bundled MetaQA KG.

Starts `kgreason serve --llm-free` on a free 127.0.0.1 port, then prints:
- startup: seconds until /healthz answers (the one-time load the server pays);
- sequential: p50/p95/mean latency of N questions (MetaQA dev, 1/2/3-hop mixed), one client
  with keep-alive, beside the wall time of `kgreason ask --json` (a new process each, as a
  user runs it) for the first K of the same questions, and the ratio; the CLI and server
  answers of those K are compared (they must agree: same pipeline, same ranker);
- concurrent: C client threads sharing a fixed number of requests (bounded: it stops when
  they are done): requests/s, p50/p95, and how many were refused with 429.
Then it stops the server with SIGTERM and checks it exits 0.

    python bench/server_load.py [--questions 50] [--cli-runs 5] [--clients 8] [--requests 200]
    python bench/server_load.py --workers 1,2 --cli-runs 0   # `serve --workers`: ok/s ratio
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from importlib import resources
from pathlib import Path

import httpx

SRC = Path(__file__).resolve().parents[1] / "src"


def questions(n: int) -> list[str]:
    """The first questions of MetaQA dev, taken round-robin from 1, 2 and 3 hops."""
    base = resources.files("kgreason.eval").joinpath("data", "metaqa")
    per = [
        [ln.split("\t")[0] for ln in gzip.decompress(
            base.joinpath(f"{h}-hop-dev.txt.gz").read_bytes()).decode().splitlines()[:n]]
        for h in (1, 2, 3)
    ]  # fmt: skip
    mixed = [q for trio in zip(*per, strict=True) for q in trio]
    return mixed[:n]


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_"))}
    return e | {"PYTHONPATH": str(SRC)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    port: int, max_concurrency: int, workers: int = 1, extra: list[str] | None = None
) -> tuple[subprocess.Popen[str], float]:
    """The server, once /healthz answers (from every worker, with `workers` > 1)."""
    cmd = [sys.executable, "-m", "kgreason", "serve", "--llm-free", "--port", str(port),
           "--max-concurrency", str(max_concurrency), "--workers", str(workers),
           *(extra or [])]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env(), stderr=subprocess.PIPE, text=True)
    seen: set[object] = set()
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            r = httpx.get(
                f"http://127.0.0.1:{port}/healthz", headers={"Connection": "close"}, timeout=1
            )
            if r.status_code == 200:
                seen.add(r.json().get("worker"))
                if len(seen) >= workers:
                    return proc, time.perf_counter() - t0
        except httpx.TransportError:
            time.sleep(0.05)


def answers(out: dict) -> list[str]:
    if out.get("error_kind"):
        return [str(out["error_kind"])]
    return [a["name"] for a in out.get("answers") or []] or [
        c["name"] for c in (out.get("candidates") or [])[:5]
    ]


def sequential(url: str, qs: list[str]) -> tuple[list[float], list[dict]]:
    lat, outs = [], []
    with httpx.Client(base_url=url, timeout=120) as c:
        c.post("/v1/ask", json={"question": qs[0]})  # connection set up outside the figures
        for q in qs:
            t0 = time.perf_counter()
            r = c.post("/v1/ask", json={"question": q})
            lat.append(time.perf_counter() - t0)
            if r.status_code not in (200, 404):  # 404: a topic the bundled KG lacks
                r.raise_for_status()
            outs.append(r.json())
    return lat, outs


def cold_cli(qs: list[str]) -> tuple[list[float], list[dict]]:
    walls, outs = [], []
    for q in qs:
        t0 = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-m", "kgreason", "ask", q, "--json"],
            env=env(), capture_output=True, text=True, check=False,
        )  # fmt: skip
        walls.append(time.perf_counter() - t0)
        outs.append(json.loads(p.stdout) if p.stdout.strip() else {"error": p.stderr})
    return walls, outs


def concurrent(url: str, qs: list[str], clients: int, total: int) -> dict[str, float]:
    lock = threading.Lock()
    state = {"next": 0}
    lat: list[float] = []
    codes: dict[int, int] = {}

    def worker() -> None:
        with httpx.Client(base_url=url, timeout=120) as c:
            while True:
                with lock:
                    i = state["next"]
                    if i >= total:
                        return
                    state["next"] = i + 1
                t0 = time.perf_counter()
                r = c.post("/v1/ask", json={"question": qs[i % len(qs)]})
                dt = time.perf_counter() - t0
                with lock:
                    codes[r.status_code] = codes.get(r.status_code, 0) + 1
                    if r.status_code == 200:
                        lat.append(dt)

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {
        "wall_s": wall,
        "ok_per_s": len(lat) / wall,
        "p50_ms": 1000 * pct(lat, 50) if lat else float("nan"),
        "p95_ms": 1000 * pct(lat, 95) if lat else float("nan"),
        "ok": codes.get(200, 0),
        "refused_429": codes.get(429, 0),
        "other": sum(v for k, v in codes.items() if k not in (200, 429)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--cli-runs", type=int, default=5)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--max-concurrency", type=int, default=8)
    ap.add_argument(
        "--workers",
        default="1",
        help="`serve --workers` counts to measure in turn, e.g. 1,2 (ratios against the first)",
    )
    a = ap.parse_args()
    qs = questions(a.questions)
    rates: dict[int, float] = {}
    for i, n in enumerate(int(x) for x in a.workers.split(",")):
        print(f"--- kgreason serve --workers {n}")
        rates[n] = run_one(a, qs, n, cli=i == 0)
    first = next(iter(rates.values()))
    for n, rate in rates.items():
        print(f"workers {n}: {rate:.1f} ok/s under {a.clients} clients, {rate / first:.2f}x")


def run_one(a: argparse.Namespace, qs: list[str], workers: int, cli: bool) -> float:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc, startup = start_server(port, a.max_concurrency, workers)
    try:
        print(f"server startup (load KG, embedder, ranker): {startup:.2f} s")
        lat, outs = sequential(url, qs)
        server_ms = [o["elapsed_ms"] for o in outs if "elapsed_ms" in o]
        missing = sum(o.get("error_kind") == "unknown-entity" for o in outs)
        p50 = statistics.median(lat)
        print(
            f"warm server, {len(qs)} sequential LLM-free questions: p50 {1000 * p50:.1f} ms, "
            f"p95 {1000 * pct(lat, 95):.1f} ms, mean {1000 * statistics.mean(lat):.1f} ms "
            f"(server-side p50 {statistics.median(server_ms):.1f} ms; {missing} question(s) "
            "name a topic the bundled KG lacks: 404 unknown-entity, timed too)"
        )
        if cli and a.cli_runs:
            walls, cli_outs = cold_cli(qs[: a.cli_runs])
            cli_med = statistics.median(walls)
            same = sum(answers(c) == answers(s) for c, s in zip(cli_outs, outs, strict=False))
            print(
                f"cold CLI `kgreason ask --json`, {len(walls)} runs: median {cli_med:.2f} s "
                f"(min {min(walls):.2f}, max {max(walls):.2f}); ratio CLI/server p50 "
                f"{cli_med / p50:.0f}x; same answers as the server: {same}/{len(walls)}"
            )
        c = concurrent(url, qs, a.clients, a.requests)
        print(
            f"{a.clients} concurrent clients, {a.requests} requests (max-concurrency "
            f"{a.max_concurrency}): {c['ok_per_s']:.1f} ok/s over {c['wall_s']:.1f} s, "
            f"p50 {c['p50_ms']:.1f} ms, p95 {c['p95_ms']:.1f} ms; ok {c['ok']}, "
            f"429 {c['refused_429']}, other {c['other']}"
        )
        return float(c["ok_per_s"])
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(60)
        print(f"server stopped with SIGTERM: exit {rc}")


if __name__ == "__main__":
    main()
