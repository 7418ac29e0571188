"""Shared helpers for the PoG graph-side tests: a deterministic hashing embedder, the paper's
Figure 1 example as a small Freebase-style KG, and MetaQA dev questions from the shared data."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tests.data import SMALL_DATA

from kgreason.kg.base import Triple
from kgreason.kg.memory import MemoryKG

REPO = Path(__file__).resolve().parents[2]
METAQA = SMALL_DATA / "kgqa" / "metaqa"  # dev slices vendored in tests/data
NIJMEGEN_NT = REPO / "tests" / "fixtures" / "nijmegen" / "freebase.nt"


class HashingEmbedder:
    """Bag of word hashes (words split on non-alphanumerics, so `location.containedby`
    contributes `location` and `containedby`); unit-norm float32. Deterministic."""

    name = "test-hashing"

    def __init__(self, dim: int = 512):
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z0-9]+", t.lower()):
                h = int.from_bytes(hashlib.md5(w.encode()).digest()[:4], "big")
                out[i, h % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out


LOC = "location.location."
ADJ = "location.adjoining_relationship.adjoins"
NIJMEGEN_NAMES = {
    "m.nijmegen": "Nijmegen",
    "m.weeze": "Weeze Airport",
    "m.germany": "Germany",
    "m.france": "France",
    "m.netherlands": "Netherlands",
    "m.belgium": "Belgium",
    "m.nrw": "North Rhine-Westphalia",
    "m.cdg": "Charles de Gaulle Airport",
    "m.eindhoven_ap": "Eindhoven Airport",
}
# CVT nodes (m.cvt*) have no name, like Freebase's adjoining_relationship nodes.
NIJMEGEN_TRIPLES = [
    ("m.nijmegen", LOC + "nearby_airports", "m.weeze"),
    ("m.nijmegen", LOC + "nearby_airports", "m.eindhoven_ap"),
    ("m.eindhoven_ap", LOC + "containedby", "m.netherlands"),
    ("m.nijmegen", LOC + "containedby", "m.netherlands"),
    ("m.weeze", LOC + "containedby", "m.nrw"),
    ("m.weeze", LOC + "containedby", "m.germany"),
    ("m.nrw", LOC + "containedby", "m.germany"),
    ("m.germany", LOC + "adjoin_s", "m.cvt1"),
    ("m.cvt1", ADJ, "m.france"),
    ("m.france", LOC + "adjoin_s", "m.cvt2"),
    ("m.cvt2", ADJ, "m.germany"),
    ("m.netherlands", LOC + "adjoin_s", "m.cvt3"),
    ("m.cvt3", ADJ, "m.germany"),
    ("m.netherlands", LOC + "adjoin_s", "m.cvt4"),
    ("m.cvt4", ADJ, "m.belgium"),
    ("m.belgium", LOC + "adjoin_s", "m.cvt5"),
    ("m.cvt5", ADJ, "m.france"),
    ("m.france", LOC + "contains", "m.cdg"),
    ("m.nijmegen", "type.object.type", "location.citytown"),
]


def nijmegen_kg() -> MemoryKG:
    return MemoryKG([Triple(*t) for t in NIJMEGEN_TRIPLES], NIJMEGEN_NAMES, name="nijmegen")


def metaqa_questions(hop: int, limit: int) -> list[tuple[str, str, list[str]]]:
    """(question, topic name, gold answers) from MetaQA dev."""
    out = []
    with METAQA.joinpath(f"{hop}-hop", "dev.txt").open() as f:
        for ln in f:
            q, ans = ln.rstrip("\n").split("\t")
            out.append((q, re.findall(r"\[([^\]]+)\]", q)[0], ans.split("|")))
            if len(out) >= limit:
                break
    return out
