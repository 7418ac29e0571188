"""Explicit inverse relations: a KG that lists both `r` and `r_inverse` (or declares
`owl:inverseOf`, or holds two relations whose edges are exact mirrors) states every fact
twice. PoG must treat such a pair as ONE hop, not two parallel edges that double the paths
and clutter every rendered path.

Detection (`detect_inverses`, run when a store is built and recorded in its manifest):
- "name": `r` and `r` + one of INVERSE_SUFFIXES both occur;
- "owl": an `owl:inverseOf` triple between the two relation names;
- "mirror": any other two relations with the same number of edges, each edge of one being
  an edge of the other reversed.
Each pair records the fraction of edges mirrored; the pipeline folds declared pairs that
are exact (1.0 both ways); undeclared mirrors are recorded and shown by `kg info` only. `fold_inverse_triples` is what the pipeline applies to a question subgraph:
it drops an inverse edge only when its mirror edge is in the same subgraph, so every edge
kept is a KG edge and nothing can be lost, whatever the pair's global coverage.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from kgreason.kg.base import Triple

INVERSE_SUFFIXES = ("_inverse", "_inv", "-inverse", "_reverse", "_reversed")
OWL_INVERSE_OF = "http://www.w3.org/2002/07/owl#inverseOf"


def name_pairs(relations: Iterable[str]) -> dict[str, str]:
    """inverse relation -> base relation, for names that spell the pair out."""
    rels = set(relations)
    out: dict[str, str] = {}
    for r in sorted(rels):
        for suf in INVERSE_SUFFIXES:
            if r.endswith(suf) and r[: -len(suf)] in rels:
                out[r] = r[: -len(suf)]
                break
    return out


def _edge_codes(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    return np.sort(a.astype(np.int64) * n + b.astype(np.int64))


def _mirrored(fwd: np.ndarray, rev: np.ndarray) -> float:
    """Fraction of `fwd` (sorted edge codes) present in `rev` (sorted codes)."""
    if len(fwd) == 0:
        return 0.0
    return float(np.isin(fwd, rev, assume_unique=True).mean())


def detect_inverses(
    h: np.ndarray, r: np.ndarray, t: np.ndarray, keys: Sequence[str], relations: Sequence[str]
) -> list[dict[str, object]]:
    """Inverse relation pairs of a deduplicated triple table (node ids h/t, relation ids r).

    Returns [{"relation", "inverse", "source", "mirrored"}], `relation` the one kept
    (the base name, else the smaller name), `mirrored` = min over both directions of the
    fraction of edges whose reverse is an edge of the other relation."""
    n = max(len(keys), 1)
    by_rel: dict[int, np.ndarray] = {}
    order = np.argsort(r, kind="stable")
    bounds = np.searchsorted(r[order], np.arange(len(relations) + 1))
    for i in range(len(relations)):
        by_rel[i] = order[bounds[i] : bounds[i + 1]]
    rel_id = {name: i for i, name in enumerate(relations)}
    declared: dict[tuple[str, str], str] = {}
    for inv, base in name_pairs(relations).items():
        declared[(base, inv)] = "name"
    if OWL_INVERSE_OF in rel_id:
        for e in by_rel[rel_id[OWL_INVERSE_OF]].tolist():
            a, b = keys[int(h[e])], keys[int(t[e])]
            if a in rel_id and b in rel_id and a != b:
                declared.setdefault((min(a, b), max(a, b)), "owl")
    # undeclared exact mirrors: candidates share an edge count; compare edge-set hashes
    fwd_key: dict[int, bytes] = {}
    rev_key: dict[bytes, list[int]] = defaultdict(list)
    for i, idx in by_rel.items():
        if len(idx) == 0 or relations[i] == OWL_INVERSE_OF:
            continue
        fwd_key[i] = _edge_codes(h[idx], t[idx], n).tobytes()
        rev_key[_edge_codes(t[idx], h[idx], n).tobytes()].append(i)
    found = dict(declared)
    for i, k in fwd_key.items():
        for j in rev_key.get(k, ()):
            a, b = relations[i], relations[j]
            if i != j and not any((x, y) in found for x, y in ((a, b), (b, a))):
                found[(min(a, b), max(a, b))] = "mirror"
    out: list[dict[str, object]] = []
    for (a, b), source in sorted(found.items()):
        ia, ib = by_rel[rel_id[a]], by_rel[rel_id[b]]
        fa, fb = _edge_codes(h[ia], t[ia], n), _edge_codes(h[ib], t[ib], n)
        ra, rb = _edge_codes(t[ia], h[ia], n), _edge_codes(t[ib], h[ib], n)
        mirrored = min(_mirrored(ra, fb), _mirrored(rb, fa))
        out.append({"relation": a, "inverse": b, "source": source, "mirrored": round(mirrored, 4)})
    return out


def inverse_map(
    pairs: Iterable[Mapping[str, object]], *, exact_only: bool = True, declared_only: bool = True
) -> dict[str, str]:
    """inverse relation -> the relation kept, from `detect_inverses` records. By default
    only DECLARED pairs (by name or owl:inverseOf) that are exact mirrors: an undeclared
    mirror pair (Freebase's containedby/contains) stays two relations, which path search
    already merges into one hop when they join the same sets (`Hop.alt_relations`), showing
    both names to the LLM."""
    return {
        str(p["inverse"]): str(p["relation"])
        for p in pairs
        if (not exact_only or float(p["mirrored"]) >= 1.0)  # type: ignore[arg-type]
        and (not declared_only or p["source"] != "mirror")
    }


def fold_inverse_triples(
    triples: Sequence[Triple], inverse_of: Mapping[str, str] | None = None
) -> Sequence[Triple]:
    """The triples without every (h, inv, t) whose mirror (t, r, h) is among them, for the
    pairs in `inverse_of` (inverse -> kept) plus those whose names spell the pair out."""
    rels = {x.relation for x in triples}
    pairs = name_pairs(rels)
    pairs.update({k: v for k, v in (inverse_of or {}).items() if k in rels})
    if not pairs:
        return triples
    present = set(triples)
    return [
        x
        for x in triples
        if x.relation not in pairs or Triple(x.tail, pairs[x.relation], x.head) not in present
    ]


def known_inverses(kg: object) -> dict[str, str]:
    """The exact inverse pairs a KG recorded (stores built by this kgreason: their manifest);
    {} for other backends, where only pairs spelled out by name are folded."""
    from kgreason.kg.store.kg import StoreKG  # lazy: the store package imports this module

    if isinstance(kg, StoreKG):
        return inverse_map(kg.manifest.inverse_relations)
    return {}
