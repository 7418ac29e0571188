"""Knowledge-graph settings: which KG, and how much a question may fetch from it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: relations PoG drops (kgreason.kg.base.is_noise_relation): Freebase bookkeeping
DEFAULT_NOISE_PREFIXES: tuple[str, ...] = (
    "type.object.",
    "common.",
    "freebase.",
    "sameAs",
    "http://www.w3.org/2002/07/owl#sameAs",
)


class KGSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: "store", "sparql", "memory" or a backend registered in the `KGBackends` passed to
    #: `open_kg` (kg/open.py); unset = inferred: sparql_url set -> sparql, else store.
    backend: str | None = None
    #: A store directory built by `kgreason kg build`; None means the bundled KG.
    store: Path | None = None
    sparql_url: str | None = None
    #: Triple files (TSV, MetaQA, N-Triples, Turtle...) the "memory" backend loads.
    files: list[Path] = []
    dialect: Literal["freebase", "wikidata", "generic"] = "freebase"
    #: One deadline per SPARQL request: connect + headers + the whole body.
    timeout_s: float = 30.0
    #: SPARQL reply bodies larger than this are refused while streaming (sparql-too-large).
    max_reply_bytes: int = Field(default=64 * 1024 * 1024, gt=0)
    max_retries: int = 3
    page_size: int = 10_000
    noise_prefixes: list[str] = list(DEFAULT_NOISE_PREFIXES)
    #: RDF facts whose object is a literal (an IATA code, an area, a date): "drop" leaves
    #: them out, "keep" makes each literal a node named (and identified) by its lexical
    #: value. "drop" is PoG/ToG's Freebase practice (they keep only `m.` entities after the
    #: 1-hop query): literal neighbours crowd out entities in the LLM's pruning prompts and
    #: are dead ends for path search. Names (`type.object.name`, `rdfs:label`) are names
    #: under both. Applied by `kgreason kg build` (recorded in the store's manifest; opening
    #: a store built under the other policy is an error) and by SparqlKG, which supports
    #: "drop" only. Line formats (TSV, MetaQA) have no literals.
    literals: Literal["drop", "keep"] = "drop"

    @field_validator("backend")
    @classmethod
    def _backend_name(cls, v: str | None) -> str | None:
        """A name only: `open_kg` checks it against the registry it is given (settings are
        data; the registries are the pipeline's)."""
        if v is not None and not re.fullmatch(r"\w[\w.-]{0,63}", v):
            raise ValueError(f"not a KG backend name: {v[:80]!r}")
        return v
