"""Knowledge-graph settings: which KG, and how much a question may fetch from it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kgreason.kg.base import DEFAULT_NOISE_PREFIXES


class KGSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: A store directory built by `kgreason kg build`; None means the bundled KG.
    store: Path | None = None
    sparql_url: str | None = None
    dialect: Literal["freebase", "wikidata", "generic"] = "freebase"
    timeout_s: float = 30.0
    max_retries: int = 3
    page_size: int = 10_000
    noise_prefixes: list[str] = list(DEFAULT_NOISE_PREFIXES)
