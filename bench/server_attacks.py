"""The server under the hardening report's attacks: what a user's other requests see.

Starts `kgreason serve --llm-free --deadline D` (a real process on a free 127.0.0.1 port)
and, while a thread asks /healthz every 10 ms on its own connection, it:
1. measures /healthz at rest (the baseline of the same run);
2. sends each freeze payload of the report (tests/security/test_server_freeze.py's, one per
   parser family) at 10k, 50k and 200k characters to POST /v1/solve, two at a time, and
   records how long each took against its deadline;
3. sends 1,000 requests with random methods and random paths (raw HTTP/1.1, no token),
   which fill the closed label sets, then N more, counting the /metrics series after each.
It prints /healthz p50 / p99 / max at rest and under attack (and their ratio), every
payload's status and time, how many ended after deadline + 1 s, and the series counts.

    python bench/server_attacks.py [--deadline 10] [--random-requests 10000]
"""

from __future__ import annotations

import argparse
import random
import re
import socket
import string
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.server_load import free_port, pct, start_server
from tests.security.payloads import payloads

SIZES = (10_000, 50_000, 200_000)


class Poller(threading.Thread):
    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url, self.samples = url, []
        self.stop = threading.Event()
        self.errors = 0

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=120) as c:
            while not self.stop.is_set():
                t0 = time.perf_counter()
                try:
                    c.get("/healthz").raise_for_status()
                except httpx.HTTPError:
                    self.errors += 1
                self.samples.append((t0, time.perf_counter() - t0))
                time.sleep(0.01)

    def between(self, t0: float, t1: float) -> list[float]:
        return [lat for t, lat in self.samples if t0 <= t <= t1]


def figures(xs: list[float]) -> str:
    if not xs:
        return "no samples"
    return (
        f"p50 {pct(xs, 50) * 1e3:6.1f} ms, p99 {pct(xs, 99) * 1e3:6.1f} ms, "
        f"max {max(xs) * 1e3:6.1f} ms ({len(xs)} samples)"
    )


def attack(url: str, deadline: float) -> tuple[list[tuple[str, int, int, float]], float, float]:
    jobs = [(n, p) for n in SIZES for p in payloads(n)]

    def one(job: tuple[int, dict[str, object]]) -> tuple[str, int, int, float]:
        n, body = job
        with httpx.Client(base_url=url, timeout=deadline + 60) as c:
            t0 = time.perf_counter()
            r = c.post("/v1/solve", json=body)
            took = time.perf_counter() - t0
        name = repr(str(body["program"])[:14]) + (
            f" ({body['solver']})" if "solver" in body else ""
        )
        return name, n, r.status_code, took

    t0 = time.perf_counter()
    with ThreadPoolExecutor(2) as ex:
        rows = list(ex.map(one, jobs))
    return rows, t0, time.perf_counter()


def raw_request(host: str, port: int, method: str, path: str) -> None:
    with socket.create_connection((host, port), timeout=30) as s:
        s.sendall(
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        )
        while s.recv(65536):
            pass


def series(url: str) -> int:
    text = httpx.get(url + "/metrics", timeout=30).text
    return len(re.findall(r"^kgreason_\w+(?:\{[^}]*\})? ", text, re.M))


def random_requests(port: int, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    chars = string.ascii_uppercase + string.digits
    with ThreadPoolExecutor(4) as ex:
        for _ in range(n):
            method = "".join(rng.choices(chars, k=rng.randint(1, 12)))
            path = "/" + "/".join(
                "".join(rng.choices(string.ascii_lowercase, k=6)) for _ in range(rng.randint(1, 4))
            )
            ex.submit(raw_request, "127.0.0.1", port, method, rng.choice([path, "/healthz"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deadline", type=float, default=10.0)
    ap.add_argument("--random-requests", type=int, default=10_000)
    ap.add_argument("--rest-s", type=float, default=3.0, help="seconds of /healthz at rest")
    args = ap.parse_args()

    port = free_port()
    proc, startup = start_server(port, max_concurrency=4, extra=["--deadline", str(args.deadline)])
    url = f"http://127.0.0.1:{port}"
    print(f"server up in {startup:.1f} s (deadline {args.deadline:g} s)")
    poll = Poller(url)
    poll.start()
    try:
        t_rest = time.perf_counter()
        time.sleep(args.rest_s)
        rest = poll.between(t_rest, time.perf_counter())
        rows, t0, t1 = attack(url, args.deadline)
        under = poll.between(t0, t1)
        print("\n| payload | chars | status | seconds |\n|---|---|---|---|")
        for name, n, code, took in rows:
            print(f"| {name} | {n:,} | {code} | {took:.3f} |")
        late = [r for r in rows if r[3] > args.deadline + 1.0]
        print(f"\nrequests: {len(rows)}, ended after deadline + 1 s: {len(late)}")
        print(f"/healthz at rest:      {figures(rest)}")
        print(f"/healthz under attack: {figures(under)}")
        if rest and under:
            print(f"p99 ratio under attack / at rest: {pct(under, 99) / pct(rest, 99):.2f}x")
        print(f"/healthz errors: {poll.errors}")
        fresh = series(url)
        random_requests(port, 1_000, seed=1)  # fills the closed label sets
        warmed = series(url)
        t_r = time.perf_counter()
        random_requests(port, args.random_requests, seed=2)
        print(
            f"\n/metrics series: {fresh} fresh, {warmed} after 1,000 random-method requests,"
            f" {series(url)} after {args.random_requests:,} more"
            f" ({time.perf_counter() - t_r:.1f} s)"
        )
    finally:
        poll.stop.set()
        proc.terminate()
        proc.wait(60)


if __name__ == "__main__":
    main()
