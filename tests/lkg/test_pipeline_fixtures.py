"""Shared test helpers for the SymbolLKG pipeline tests (no tests here).

`HashEmbedder` is a tiny deterministic bag-of-words embedder: texts sharing normalised
words get a high cosine, so retrieval tests exercise the real vector path without a model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np

from kgreason.lkg.ids import normalize_name


class HashEmbedder:
    name = "test-hash"

    def __init__(self, dim: int = 256):
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in normalize_name(t).split():
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out


def js(obj: object) -> str:
    return json.dumps(obj)


#: Figure 2 of the paper: the scholarship example, as an extraction LLM would return it.
SCHOLARSHIP_CONTEXT = (
    'To qualify for the "Future Leaders Scholarship", applicants must be enrolled in a STEM '
    "major and hold a GPA >= 3.8. Alice is a STEM major with a 3.9 GPA. She recently "
    'published a paper. Bob studies Arts (GPA 3.5). The "Arts Nova Award" requires a portfolio.'
)
SCHOLARSHIP_QUESTION = "Is Alice eligible for the Future Leaders Scholarship?"
SCHOLARSHIP_EXTRACTION = {
    "entities": [
        {"name": "Alice", "type": "Person"},
        {"name": "Bob", "type": "Person"},
        {"name": "Future Leaders Scholarship", "type": "Scholarship"},
        {"name": "Arts Nova Award", "type": "Award"},
        {"name": "paper", "type": "Publication"},
        {"name": "portfolio", "type": "Document"},
    ],
    "concepts": [
        {"name": "STEM major", "type": "Concept"},
        {"name": "GPA", "type": "Concept"},
        {"name": "Arts", "type": "Concept"},
        {"name": "Applicant", "type": "Concept"},
    ],
    "relationships": [
        {
            "source": "Alice",
            "relation": "IS_A",
            "target": "STEM major",
            "raw_text": "Alice is a STEM major with a 3.9 GPA.",
        },
        {
            "source": "Alice",
            "relation": "HAS_GPA",
            "target": "GPA",
            "raw_text": "Alice is a STEM major with a 3.9 GPA.",
        },
        {
            "source": "Alice",
            "relation": "PUBLISHED",
            "target": "paper",
            "raw_text": "She recently published a paper.",
        },
        {
            "source": "Bob",
            "relation": "STUDIES",
            "target": "Arts",
            "raw_text": "Bob studies Arts (GPA 3.5).",
        },
        {
            "source": "Arts Nova Award",
            "relation": "REQUIRES",
            "target": "portfolio",
            "raw_text": 'The "Arts Nova Award" requires a portfolio.',
        },
    ],
    "rules": [
        {
            "expression": "forall x (Major(x, STEM) & GPA(x) >= 3.8 -> Eligible(x, FLScholarship))",
            "raw_text": 'To qualify for the "Future Leaders Scholarship", applicants must be '
            "enrolled in a STEM major and hold a GPA >= 3.8.",
            "description": "Eligibility for the Future Leaders Scholarship",
            "related_entities": ["Future Leaders Scholarship", "STEM major", "GPA", "Applicant"],
        },
        {
            "expression": "Requires(ArtsNovaAward, Portfolio)",
            "raw_text": 'The "Arts Nova Award" requires a portfolio.',
            "description": "The Arts Nova Award requires a portfolio",
            "related_entities": ["Arts Nova Award", "portfolio"],
        },
    ],
    "constraints": [
        {
            "constraint_type": "Arithmetic",
            "expression": "GPA(x) >= 3.8",
            "raw_text": "hold a GPA >= 3.8",
            "description": "Minimum GPA 3.8 for the scholarship",
            "related_entities": ["GPA", "Future Leaders Scholarship"],
        },
    ],
}
