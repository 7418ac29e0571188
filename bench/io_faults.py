"""Peak RSS and wall time of one LLM / SPARQL request against hostile servers on 127.0.0.1.

    python bench/io_faults.py                      # this tree's src/
    python bench/io_faults.py --src /path/to/src   # another checkout (a "before" figure)
    python bench/io_faults.py --only ask           # only `kgreason ask` end to end

Each probe runs the client in a fresh child process (peak RSS = the child's ru_maxrss) under
an address-space limit (--as-gb, default 6) and a wall limit (--wall-s, default 240), so an
unbounded client fails here instead of exhausting the machine. Figures on a shared machine
vary; the ratio wall / timeout is what the hardening targets (< 2), with RSS < 1 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.llm.fake_server import FakeOpenAIServer  # noqa: E402
from tests.security.fault_sparql import FaultSparqlServer  # noqa: E402

CHILD = textwrap.dedent("""
    import asyncio, json, resource, sys, time
    kind, url, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
    t0 = time.perf_counter()
    err = None
    try:
        if kind == "llm":
            from kgreason.llm.openai_adapter import OpenAIChat
            async def go():
                a = OpenAIChat("m", url, "k", timeout)
                try:
                    c = await a.complete([{"role": "user", "content": "hi"}], stage="b")
                    return f"ok: {len(c.text):,} chars, {c.usage.completion_tokens:,} tokens"
                finally:
                    await a.aclose()
        else:
            from kgreason.kg.sparql.client import RetryPolicy, SparqlClient
            async def go():
                c = SparqlClient(url, timeout_s=timeout, retry=RetryPolicy(max_retries=3))
                try:
                    r = await c.select("SELECT * {}")
                    return f"ok: {len(r.rows):,} rows"
                finally:
                    await c.aclose()
        out = asyncio.run(go())
    except BaseException as e:
        out = None
        err = f"{type(e).__name__}: {str(e)[:160]}"
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"result": out, "error": err, "wall_s": round(wall, 2),
                      "peak_rss_mb": round(rss, 1)}))
""")


def probe(src: str, kind: str, url: str, timeout: float, as_gb: float, wall_s: float) -> dict:
    limit = int(as_gb * 1024**3)
    code = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n" + CHILD
    env = {**os.environ, "PYTHONPATH": src}
    t0 = time.perf_counter()
    try:
        r = subprocess.run(
            [sys.executable, "-c", code, kind, url, str(timeout)],
            env=env,
            capture_output=True,
            text=True,
            timeout=wall_s,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"still running after {wall_s:g} s (killed)", "wall_s": wall_s}
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        tail = (r.stderr.strip().splitlines() or ["?"])[-1][:160]
        return {
            "error": f"exit {r.returncode}: {tail}",
            "wall_s": round(time.perf_counter() - t0, 2),
        }
    return json.loads(lines[-1])


def ask_probe(src: str, base_url: str, as_gb: float, wall_s: float) -> dict:
    """`kgreason ask` end to end (static embedder, no retries, no cache)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_"))}
    env.update(
        PYTHONPATH=src,
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY="k",
        KGREASON_EMBED__BACKEND="static",
        KGREASON_LLM__TIMEOUT_S="30",
        KGREASON_LLM__MAX_RETRIES="0",
        KGREASON_LLM__CACHE="false",
    )
    limit = int(as_gb * 1024**3)
    code = (
        "import resource, runpy, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
        "sys.argv = ['kgreason', 'ask', 'who directed [Once Were Warriors]']\n"
        "try:\n    runpy.run_module('kgreason', run_name='__main__')\n"
        "finally:\n"
        "    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "    print(f'PEAK_RSS_MB {r:.1f}', file=sys.stderr)\n"
    )
    t0 = time.perf_counter()
    try:
        r = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=wall_s
        )
    except subprocess.TimeoutExpired:
        return {"error": f"still running after {wall_s:g} s (killed)", "wall_s": wall_s}
    wall = round(time.perf_counter() - t0, 2)
    lines = r.stderr.strip().splitlines()
    rss = [float(x.split()[1]) for x in lines if x.startswith("PEAK_RSS_MB")]
    msg = next((x for x in lines if x.startswith("error:")), (lines or ["?"])[-1])
    out = {"wall_s": wall, "error": f"exit {r.returncode}: {msg[:160]}"}
    if rss:
        out["peak_rss_mb"] = rss[0]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=str(REPO / "src"))
    ap.add_argument("--as-gb", type=float, default=6.0)
    ap.add_argument("--wall-s", type=float, default=240.0)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    llm = FakeOpenAIServer().start()
    sp = FaultSparqlServer(limit=2 * 1024**3, max_s=120).start()
    probes = [
        ("llm 300 MB reply", "llm", llm, ("huge", 300 * 1024**2), llm.base_url, 30.0),
        ("llm trickle", "llm", llm, ("trickle", 60.0), llm.base_url, 3.0),
        ("sparql endless body", "sparql", None, None, sp.base + "/endless", 30.0),
        ("sparql trickle", "sparql", None, None, sp.base + "/trickle", 2.0),
    ]
    print(f"src: {a.src}  (address-space limit {a.as_gb:g} GB, wall limit {a.wall_s:g} s)")
    try:
        for name, kind, server, plan, url, timeout in probes:
            if a.only and a.only not in name:
                continue
            if server is not None:
                server.plan = [plan]
            res = probe(a.src, kind, url, timeout, a.as_gb, a.wall_s)
            ratio = res["wall_s"] / timeout
            print(
                f"{name:22s} timeout {timeout:5.1f} s  wall {res['wall_s']:7.2f} s "
                f"({ratio:4.1f}x)  peak RSS {res.get('peak_rss_mb', float('nan')):8.1f} MB  "
                f"{res.get('error') or res.get('result')}",
                flush=True,
            )
        if not a.only or "ask" in a.only:
            llm.plan = [("huge", 300 * 1024**2)] * 20
            res = ask_probe(a.src, llm.base_url, a.as_gb, a.wall_s)
            print(
                f"{'ask, 300 MB replies':22s} timeout  30.0 s  wall {res['wall_s']:7.2f} s "
                f"({res['wall_s'] / 30:4.1f}x)  peak RSS "
                f"{res.get('peak_rss_mb', float('nan')):8.1f} MB  {res['error']}",
                flush=True,
            )
    finally:
        llm.close()
        sp.close()


if __name__ == "__main__":
    main()
