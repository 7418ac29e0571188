"""Sentence embeddings: the `Embedder` interface, backends and cosine top-k.

Backends are imported lazily by `build_embedder`, so importing this package loads no model.
"""

from kgreason.embed.base import Embedder, cosine_topk
from kgreason.embed.cache import CachedEmbedder
from kgreason.embed.errors import EmbedderError, ModelNotFoundError
from kgreason.embed.factory import build_embedder

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "EmbedderError",
    "ModelNotFoundError",
    "build_embedder",
    "cosine_topk",
]
