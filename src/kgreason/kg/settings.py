"""Knowledge-graph settings: which KG, and how much a question may fetch from it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: ToG's noise relations (kgreason.kg.base.is_noise_relation): the Freebase bookkeeping its
#: released code abandons (type.object.type/name, common.*, freebase.*, sameAs)
TOG_NOISE_PREFIXES: tuple[str, ...] = (
    "type.object.",
    "common.",
    "freebase.",
    "sameAs",
    "http://www.w3.org/2002/07/owl#sameAs",
)
#: the default of StoreKG / MemoryKG / SparqlKG made directly (not through settings): ToG's
#: list, as it always was; settings (open_kg, the CLI) default to kg.noise_filter = "none"
DEFAULT_NOISE_PREFIXES = TOG_NOISE_PREFIXES
#: kg.noise_filter -> the relation prefixes dropped. "none" is the PoG paper's setting: its
#: Appendix D queries filter nothing, and Table 9's third reasoning path walks
#: common.topic.notable_types, which "tog" would drop.
NOISE_FILTERS: dict[str, tuple[str, ...]] = {"none": (), "tog": TOG_NOISE_PREFIXES}


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
    #: which relations are noise, dropped from every neighbour list and walk: "none" (the
    #: PoG paper's setting, the default) or "tog" (ToG's list, TOG_NOISE_PREFIXES). Giving
    #: `noise_prefixes` instead makes it "custom" (or the preset that list is).
    noise_filter: Literal["none", "tog", "custom"] = "none"
    #: the prefixes themselves: filled from `noise_filter` when not given
    noise_prefixes: list[str] = []
    #: RDF facts whose object is a literal (an IATA code, an area, a date): "drop" leaves
    #: them out, "keep" makes each literal a node named (and identified) by its lexical
    #: value. "drop" is PoG/ToG's Freebase practice (they keep only `m.` entities after the
    #: 1-hop query): literal neighbours crowd out entities in the LLM's pruning prompts and
    #: are dead ends for path search. Names (`type.object.name`, `rdfs:label`) are names
    #: under both. Applied by `kgreason kg build` (recorded in the store's manifest; opening
    #: a store built under the other policy is an error) and by SparqlKG, which supports
    #: "drop" only. Line formats (TSV, MetaQA) have no literals.
    literals: Literal["drop", "keep"] = "drop"

    @model_validator(mode="before")
    @classmethod
    def _noise(cls, data: Any) -> Any:
        """One source of truth for the two fields: the preset fills the list; a list given
        alone names its preset (or "custom"); both given must agree."""
        if not isinstance(data, dict):
            return data
        name, given = data.get("noise_filter"), data.get("noise_prefixes")
        if given is None:
            if name == "custom":
                raise ValueError('kg.noise_filter "custom" needs kg.noise_prefixes')
            if name is None or name in NOISE_FILTERS:
                preset = NOISE_FILTERS.get(name or "none", ())
                return {**data, "noise_prefixes": list(preset)}
            return data  # an unknown name: the Literal's error names it
        if not isinstance(given, list | tuple):
            return data
        match = next((k for k, v in NOISE_FILTERS.items() if list(v) == list(given)), None)
        if name is None:
            return {**data, "noise_filter": match or "custom"}
        if name != "custom" and name in NOISE_FILTERS and name != match:
            raise ValueError(
                f"kg.noise_filter {name!r} and kg.noise_prefixes disagree: give one of them "
                f'(or noise_filter "custom" with the list)'
            )
        return data

    @field_validator("backend")
    @classmethod
    def _backend_name(cls, v: str | None) -> str | None:
        """A name only: `open_kg` checks it against the registry it is given (settings are
        data; the registries are the pipeline's)."""
        if v is not None and not re.fullmatch(r"\w[\w.-]{0,63}", v):
            raise ValueError(f"not a KG backend name: {v[:80]!r}")
        return v
