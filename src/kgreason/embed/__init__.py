"""Sentence embeddings: the `Embedder` interface, backends and cosine top-k."""

from kgreason.embed.base import Embedder, cosine_topk

__all__ = ["Embedder", "cosine_topk"]
