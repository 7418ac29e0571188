"""SymbolLKG retrieval latency on a deterministic synthetic LKG (no LLM needed).

    python bench/lkg_bench.py                   # 10k nodes, 300 queries
    python bench/lkg_bench.py --nodes 50000 --queries 100
    python bench/lkg_bench.py --embedder hash   # skip the vendored static model

Typed nodes are inserted directly (entities, concepts, rules, constraints with IS_A,
MENTIONS, APPLIES_TO and fact edges, in proportions like an extracted corpus). One query =
the LLM-free retrieval path: deterministic query-entity matching, three thresholded vector
searches (Rule / Constraint / Entity indices), exact names, FTS5 BM25, and the 2-hop logical
hull. Printed: build and index times, then median / p95 per query in ms, with and without
the query embedding (the embedder's own cost). Target: under 5 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kgreason.lkg.ids import node_id
from kgreason.lkg.index import LKGIndex
from kgreason.lkg.retrieval import HybridRetriever
from kgreason.lkg.storage import LKGStore
from kgreason.lkg.types import APPLIES_TO, IS_A, MENTIONS, Edge, LKGraph, Node

WORDS = (  # noqa: SIM905
    "red blue green office printer computer club prize student course exam seat chair table "
    "book library garden river bridge tower market school teacher doctor lawyer artist year "
    "north south east west early late small large old new fast slow bright dark warm cold"
).split()
CTYPES = ("Ordering", "AllDifferent", "Arithmetic", "Generic")


class HashEmbedder:
    """Deterministic bag-of-words hashing embedder (fallback when no model is wanted)."""

    name = "bench-hash"
    dim = 256

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            out[i] /= n if n else 1.0
        return out


def synthetic(n_nodes: int, seed: int = 7) -> LKGraph:
    """60% entities, 5% concepts, 25% rules, 10% constraints."""
    rnd = random.Random(seed)
    g = LKGraph()
    n_con = max(1, n_nodes * 5 // 100)
    n_rule = n_nodes * 25 // 100
    n_cst = n_nodes * 10 // 100
    n_ent = n_nodes - n_con - n_rule - n_cst

    def phrase(k: int) -> str:
        return " ".join(rnd.choice(WORDS) for _ in range(k))

    concepts = [f"{phrase(1).title()} Kind {i}" for i in range(n_con)]
    entities = [f"{phrase(2).title()} {i}" for i in range(n_ent)]
    for c in concepts:
        g.add_node(Node(id=node_id("concept", c), kind="concept", name=c, type="Concept"))
    for i, e in enumerate(entities):
        eid = node_id("entity", e)
        g.add_node(Node(id=eid, kind="entity", name=e, type="Thing"))
        g.add_edge(Edge(src=eid, rel=IS_A, dst=node_id("concept", concepts[i % n_con])))
        if i and rnd.random() < 0.5:
            other = node_id("entity", entities[rnd.randrange(i)])
            g.add_edge(Edge(src=eid, rel="LEFT_OF", dst=other, raw_text=f"{e} is left of x."))
    for kind, count in (("rule", n_rule), ("constraint", n_cst)):
        for i in range(count):
            ents = rnd.sample(range(n_ent), 3)
            text = f"If {entities[ents[0]]} is {phrase(2)} then {entities[ents[1]]} is {phrase(2)}."
            nid = node_id(kind, f"{kind}{i}:{text}")
            g.add_node(Node(
                id=nid, kind=kind, name=text[:60], raw_text=text, expression=f"{kind}_{i}(x)",
                description=text, type=CTYPES[i % 4] if kind == "constraint" else "Rule",
                related=[node_id("entity", entities[j]) for j in ents],
            ))  # fmt: skip
            for j in ents:
                g.add_edge(Edge(src=nid, rel=MENTIONS, dst=node_id("entity", entities[j])))
            g.add_edge(Edge(src=nid, rel=APPLIES_TO, dst=node_id("concept", rnd.choice(concepts))))
    return g


def queries(g: LKGraph, n: int, seed: int = 11) -> list[str]:
    rnd = random.Random(seed)
    ents = g.of_kind("entity")
    return [
        f"Is {rnd.choice(ents).name} {rnd.choice(WORDS)} if {rnd.choice(ents).name} is "
        f"{rnd.choice(WORDS)}?"
        for _ in range(n)
    ]


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(p * (len(s) - 1)))]


#: the paper's ground-truth solver per dataset (section 4.5, Table 5)
ROUTER_GOLD = {"AR-LSAT": "z3", "LogicalDeduction": "z3", "FOLIO": "prover9",
               "ProofWriter": "prover9", "ProntoQA": "horn"}  # fmt: skip


def router_accuracy(data_dir: Path) -> None:
    """Structural router on the Logic-LM dev sets from the question and options alone (an
    empty subgraph: no LLM extraction), against the paper's per-dataset ground truth."""
    from collections import Counter

    from kgreason.lkg.retrieval import RetrievedSubgraph
    from kgreason.lkg.router import features, structural_route

    empty = RetrievedSubgraph(query="")
    for ds, gold in ROUTER_GOLD.items():
        f = data_dir / ds / "dev.json"
        if not f.is_file():
            print(f"router: {f} missing, skipped")
            continue
        recs = json.loads(f.read_text(encoding="utf-8"))
        got = Counter(
            structural_route(features(empty, r["question"], r["options"]))[0] for r in recs
        )
        print(
            f"router {ds:16s} n={len(recs):4d} accuracy {got[gold] / len(recs):6.1%}  {dict(got)}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--embedder", choices=("static", "hash", "none"), default="static")
    ap.add_argument("--hops", type=int, default=2)
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--tau", type=float, default=0.5)
    ap.add_argument(
        "--router-data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "logic",
        help="Logic-LM data directory for the structural-router check ('' to skip)",
    )  # fmt: skip
    args = ap.parse_args()
    if str(args.router_data):
        router_accuracy(args.router_data)

    t0 = time.perf_counter()
    g = synthetic(args.nodes)
    store = LKGStore()
    store.add_graph(g)
    t_build = time.perf_counter() - t0
    embedder = None
    if args.embedder == "static":
        try:
            from kgreason.embed.static import StaticEmbedder

            embedder = StaticEmbedder()
        except Exception as e:
            print(f"static embedder unavailable ({e}); using the hashing embedder")
            embedder = HashEmbedder()
    elif args.embedder == "hash":
        embedder = HashEmbedder()
    t1 = time.perf_counter()
    index = LKGIndex(store, embedder).refresh()
    t_index = time.perf_counter() - t1
    retriever = HybridRetriever(index, tau=args.tau, hops=args.hops, top_k=args.top_k)
    qs = queries(g, args.queries)

    async def run() -> tuple[list[float], list[float], list[float], list[int]]:
        total, cpu, embed, sizes = [], [], [], []
        for q in qs[:10]:  # warm-up
            await retriever.retrieve(q)
        for q in qs:
            te = 0.0
            if embedder is not None:
                a = time.perf_counter()
                embedder.embed([q])
                te = time.perf_counter() - a
            a, c0 = time.perf_counter(), time.thread_time()
            sub = await retriever.retrieve(q)
            total.append((time.perf_counter() - a) * 1e3)
            cpu.append((time.thread_time() - c0) * 1e3)
            embed.append(te * 1e3)
            sizes.append(len(sub.nodes))
        return total, cpu, embed, sizes

    total, cpu, embed, sizes = asyncio.run(run())
    no_embed = [t - e for t, e in zip(total, embed, strict=True)]
    c = store.counts()
    print(f"LKG: {args.nodes} nodes ({c.get('entity', 0)} entities, {c.get('concept', 0)} concepts, "
          f"{c.get('rule', 0)} rules, {c.get('constraint', 0)} constraints), {c['edges']} edges")  # fmt: skip
    print(f"build + insert: {t_build:.2f} s; index (embeddings + adjacency): {t_index:.2f} s; "
          f"embedder: {getattr(embedder, 'name', 'none')}")  # fmt: skip
    print(
        f"retrieval over {len(qs)} queries (hops={args.hops}, top_k={args.top_k}, tau={args.tau}):"
    )
    print(
        f"  total            median {statistics.median(total):.2f} ms  p95 {pct(total, 0.95):.2f} ms"
    )
    print(
        f"  cpu time (thread) median {statistics.median(cpu):.2f} ms  p95 {pct(cpu, 0.95):.2f} ms"
    )
    print(
        f"  minus query embed median {statistics.median(no_embed):.2f} ms  p95 {pct(no_embed, 0.95):.2f} ms"
    )
    print(
        f"  query embedding  median {statistics.median(embed):.2f} ms  p95 {pct(embed, 0.95):.2f} ms"
    )
    print(f"  anchors+hull size median {statistics.median(sizes):.0f} nodes  max {max(sizes)}")
    print(f"  machine load average (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
    med, p95 = statistics.median(total), pct(total, 0.95)
    verdict = "met (p95)" if p95 < 5 else "met (median only)" if med < 5 else "NOT met"
    print(f"target under 5 ms per retrieval (wall clock): {verdict}")


if __name__ == "__main__":
    main()
