"""Overhead of the LLM stack, measured against the local OpenAI-protocol test server.

Prints: offline tokenizer load time and counting speed; mean round-trip through the real
adapter + retry + limit + cache stack (cache misses, i.e. HTTP to 127.0.0.1); mean cache-hit
latency; wall time of N concurrent calls under the concurrency limit. Run from the repo root:
    python bench/llm_bench.py [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.llm.fake_server import FakeOpenAIServer

from kgreason.llm import build_llm
from kgreason.llm.settings import LLMSettings
from kgreason.llm.tokens import TokenCounter


def bench_tokens() -> None:
    tc = TokenCounter()
    t0 = time.perf_counter()
    _ = tc.encoding
    load = time.perf_counter() - t0
    text = "Which river flows through the capital of the country where Lou Seal serves? " * 20
    t1 = time.perf_counter()
    n = 200
    for _ in range(n):
        tc.count_text(text)
    rate = n * len(text) / (time.perf_counter() - t1)
    print(f"tokenizer: cl100k_base offline load {load * 1000:.0f} ms, {rate / 1e6:.1f} M chars/s")


async def bench_stack(calls: int) -> None:
    server = FakeOpenAIServer().start()
    try:
        with tempfile.TemporaryDirectory() as d:
            s = LLMSettings(
                base_url=server.base_url, cache_path=Path(d) / "c.sqlite", concurrency=8
            )
            llm = build_llm(s)
            msgs = lambda i: [{"role": "user", "content": f"question {i}"}]  # noqa: E731
            miss, hit = [], []
            for i in range(calls):
                t0 = time.perf_counter()
                await llm.complete(msgs(i), stage="bench")
                miss.append(time.perf_counter() - t0)
            for i in range(calls):
                t0 = time.perf_counter()
                c = await llm.complete(msgs(i), stage="bench")
                hit.append(time.perf_counter() - t0)
                assert c.cached
            t0 = time.perf_counter()
            await asyncio.gather(
                *(llm.complete(msgs(i), stage="bench", sample=1) for i in range(calls))
            )
            conc = time.perf_counter() - t0
    finally:
        server.close()
    ms = lambda xs: statistics.mean(xs) * 1000  # noqa: E731
    print(f"stack round-trip (cache miss, HTTP to 127.0.0.1): mean {ms(miss):.2f} ms over {calls}")
    print(f"cache hit: mean {ms(hit):.3f} ms over {calls}")
    print(f"{calls} concurrent misses (limit 8): {conc:.2f} s, {calls / conc:.0f} calls/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    bench_tokens()
    asyncio.run(bench_stack(args.calls))


if __name__ == "__main__":
    main()
