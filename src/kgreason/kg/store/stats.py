"""Figures about a store for `kgreason kg info`: counts, relation histogram, degrees, hubs."""

from __future__ import annotations

from typing import Any

import numpy as np

from kgreason.kg.loaders import literal_policy
from kgreason.kg.store.kg import StoreKG


def _figures(deg: np.ndarray) -> dict[str, float]:
    if len(deg) == 0:
        return {"mean": 0.0, "median": 0.0, "p99": 0.0, "max": 0}
    return {
        "mean": round(float(deg.mean()), 3),
        "median": round(float(np.median(deg)), 3),
        "p99": round(float(np.percentile(deg, 99)), 3),
        "max": int(deg.max()),
    }


def store_info(kg: StoreKG, top: int = 10) -> dict[str, Any]:
    g = kg.graph
    counts = dict(kg.manifest.counts)
    counts["named"] = counts["entities"] - counts["unnamed"]
    hist = np.bincount(np.asarray(g.fwd_rel), minlength=len(kg.relations))
    order = np.argsort(-hist, kind="stable")[:top]
    out_deg = np.diff(np.asarray(g.fwd_ptr))
    in_deg = np.diff(np.asarray(g.rev_ptr))
    total = out_deg + in_deg
    hubs = np.argsort(-total, kind="stable")[:top]
    hub_names = kg.index.display(hubs)
    return {
        "path": kg.name,
        "fingerprint": kg.fingerprint(),
        #: how RDF literal objects were loaded ("drop"/"keep"); None: no RDF source
        "literals": literal_policy(kg.manifest.sources),
        "counts": counts,
        "noise_relations": int(g.noise.sum()),
        "noise_triples": int(hist[g.noise].sum()) if len(hist) else 0,
        "relations": [
            {"relation": kg.relations[i], "triples": int(hist[i]), "noise": bool(g.noise[i])}
            for i in order.tolist()
            if hist[i] > 0
        ],
        "degree": {"out": _figures(out_deg), "in": _figures(in_deg), "total": _figures(total)},
        "hubs": [
            {
                "id": k,
                "name": n,
                "degree": int(total[h]),
                "out": int(out_deg[h]),
                "in": int(in_deg[h]),
            }
            for k, n, h in zip(kg.index.keys.many(hubs), hub_names, hubs.tolist(), strict=True)
        ],
        #: explicit inverse pairs (r, r_inverse / owl:inverseOf / exact mirrors): one hop in PoG
        "inverse_relations": kg.manifest.inverse_relations,
        "sources": kg.manifest.sources,
    }
