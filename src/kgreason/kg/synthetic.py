"""A deterministic synthetic KG with a realistic skew, for PoG's graph stages at scale.

Why: MetaQA's KB (128k triples) is too small and too regular to show how the subgraph,
clustering, reduction and path stages behave on a Freebase-sized graph. This generator gives,
from a seed alone, a KG with typed entities, ~1.5k typed relations of Zipf frequency and
power-law entity popularity (hubs with 10^4..10^5 edges at 10M triples), plus questions drawn
from it whose gold answers are known by construction:

- single-topic: a relation chain of 1..3 hops from a topic (some topics are hubs); the gold
  answers are the chain's end entities;
- two-topic: an entity x with edges to two other entities a, b; topics (a, b), gold {x}.

Everything is vectorised numpy; the same (n_triples, seed) gives the same bytes.

API:
    synth_kg(n_triples, seed=0) -> SynthKG (h, r, t int arrays; entity/relation names)
    SynthKG.write_tsv(path);  SynthKG.entity(i) -> str;  SynthKG.relation(i) -> str
    synth_questions(kg, n_single, n_multi, seed=0) -> list[SynthQuestion]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

N_TYPES = 40
N_RELATIONS = 1500


@dataclass
class SynthKG:
    h: np.ndarray
    r: np.ndarray
    t: np.ndarray
    node_type: np.ndarray
    rel_names: list[str]
    type_names: list[str]

    @property
    def n_nodes(self) -> int:
        return len(self.node_type)

    def entity(self, i: int) -> str:
        return f"{self.type_names[int(self.node_type[i])]}_{int(i)}"

    def relation(self, i: int) -> str:
        return self.rel_names[int(i)]

    def write_tsv(self, path: Path, chunk: int = 1_000_000) -> None:
        """head<TAB>relation<TAB>tail, one triple a line (kgreason's TSV loader format)."""
        tn = np.array(self.type_names, dtype=object)
        with open(path, "w", encoding="utf-8") as f:
            for a in range(0, len(self.h), chunk):
                h, r, t = self.h[a : a + chunk], self.r[a : a + chunk], self.t[a : a + chunk]
                hn = tn[self.node_type[h]]
                tt = tn[self.node_type[t]]
                rn = np.array(self.rel_names, dtype=object)[r]
                f.write(
                    "".join(
                        f"{a1}_{b1}\t{c1}\t{d1}_{e1}\n"
                        for a1, b1, c1, d1, e1 in zip(
                            hn.tolist(),
                            h.tolist(),
                            rn.tolist(),
                            tt.tolist(),
                            t.tolist(),
                            strict=True,
                        )
                    )
                )


def synth_kg(n_triples: int, seed: int = 0) -> SynthKG:
    """Typed power-law KG: relation r ~ Zipf(1.1) over N_RELATIONS, each with a domain and a
    range type; head/tail drawn inside their type with density ~ rank^-0.8 (u**5), over a
    per-type random permutation so hubs are scattered across ids."""
    rng = np.random.default_rng(seed)
    n_nodes = max(2 * N_TYPES, n_triples // 8)
    node_type = rng.integers(0, N_TYPES, size=n_nodes)
    order = np.argsort(node_type, kind="stable")  # node ids grouped by type, shuffled inside
    counts = np.bincount(node_type, minlength=N_TYPES)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for ty in range(N_TYPES):
        seg = order[starts[ty] : starts[ty] + counts[ty]]
        order[starts[ty] : starts[ty] + counts[ty]] = seg[rng.permutation(len(seg))]
    dom = rng.integers(0, N_TYPES, size=N_RELATIONS)
    rtype = rng.integers(0, N_TYPES, size=N_RELATIONS)
    w = 1.0 / np.arange(1, N_RELATIONS + 1) ** 1.1
    r = rng.choice(N_RELATIONS, size=n_triples, p=w / w.sum())

    def pick(types: np.ndarray, power: float) -> np.ndarray:
        c = counts[types]
        rank = np.minimum((c * rng.random(len(types)) ** power).astype(np.int64), c - 1)
        return order[starts[types] + rank]

    h = pick(dom[r], 5.0)
    t = pick(rtype[r], 4.0)
    keep = h != t
    type_names = [f"type{i}" for i in range(N_TYPES)]
    rel_names = [f"{type_names[dom[i]]}.rel{i}.{type_names[rtype[i]]}" for i in range(N_RELATIONS)]
    return SynthKG(
        h[keep].astype(np.int64),
        r[keep].astype(np.int64),
        t[keep].astype(np.int64),
        node_type,
        rel_names,
        type_names,
    )


@dataclass
class SynthQuestion:
    topics: list[str]
    #: relation chain per topic, with direction: (relation, forward)
    chain: list[tuple[str, bool]]
    answers: list[str]
    hops: int
    hub: bool


def _csr(src: np.ndarray, dst: np.ndarray, rel: np.ndarray, n: int):
    o = np.argsort(src, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, dst[o], rel[o]


def top_degree(deg: np.ndarray, k: int) -> np.ndarray:
    """The k nodes of highest degree, ties by id. A stable sort: numpy's default argsort
    breaks ties by CPU (its AVX-512 sort differs from the AVX2 one), which gave one seed
    different question sets, hence different bench tables, on different machines."""
    return np.argsort(-deg, kind="stable")[:k]


def synth_questions(
    kg: SynthKG, n_single: int, n_multi: int, seed: int = 0, hub_share: float = 0.2
) -> list[SynthQuestion]:
    """Single-topic questions follow forward relation chains of 1..3 hops (gold = every end
    of that relation chain, capped at 50 so questions stay answerable-looking); `hub_share`
    of them start at a top-1% degree node. Two-topic questions join two neighbours of x."""
    rng = np.random.default_rng(seed + 1)
    n = kg.n_nodes
    ptr, dst, rel = _csr(kg.h, kg.t, kg.r, n)
    rptr, rsrc, _ = _csr(kg.t, kg.h, kg.r, n)
    out_deg = np.diff(ptr)
    deg = out_deg + np.diff(rptr)
    hubs = top_degree(deg, max(10, n // 100))
    hubs = hubs[out_deg[hubs] > 0]
    normal = np.flatnonzero((out_deg > 0) & (deg < np.percentile(deg, 99)))
    qs: list[SynthQuestion] = []
    tries = 0
    while len(qs) < n_single and tries < 50 * n_single:
        tries += 1
        hub = rng.random() < hub_share
        start = int(rng.choice(hubs if hub else normal))
        hops = int(rng.integers(1, 4))
        cur = np.array([start])
        chain: list[tuple[str, bool]] = []
        for _ in range(hops):
            cand_pos = np.concatenate([np.arange(ptr[v], ptr[v + 1]) for v in cur[:50]])
            if len(cand_pos) == 0:
                break
            rr = int(rel[cand_pos[rng.integers(len(cand_pos))]])
            every = np.concatenate([np.arange(ptr[v], ptr[v + 1]) for v in cur])
            sel = every[rel[every] == rr]
            cur = np.unique(dst[sel])
            cur = cur[cur != start]
            chain.append((kg.relation(rr), True))
            if len(cur) == 0:
                break
        if len(chain) != hops or len(cur) == 0 or len(cur) > 50:
            continue
        qs.append(
            SynthQuestion([kg.entity(start)], chain, [kg.entity(int(x)) for x in cur], hops, hub)
        )
    tries = 0
    while len(qs) < n_single + n_multi and tries < 50 * max(1, n_multi):
        tries += 1
        x = int(rng.choice(normal))
        nb = np.concatenate([dst[ptr[x] : ptr[x + 1]], rsrc[rptr[x] : rptr[x + 1]]])
        nb = np.unique(nb[nb != x])
        if len(nb) < 2:
            continue
        a, b = rng.choice(nb, size=2, replace=False)
        hub = bool(np.isin([a, b], hubs).any())
        qs.append(SynthQuestion([kg.entity(int(a)), kg.entity(int(b))], [], [kg.entity(x)], 2, hub))
    return qs
