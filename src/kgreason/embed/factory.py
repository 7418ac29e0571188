"""Build the configured embedder (wrapped in the string cache) from `EmbedSettings`."""

from __future__ import annotations

from kgreason.embed.base import Embedder
from kgreason.embed.cache import CachedEmbedder
from kgreason.embed.errors import EmbedderError
from kgreason.embed.settings import EmbedSettings


def build_embedder(s: EmbedSettings) -> Embedder:
    """The torch-free MiniLM (default), the vendored static model (or `s.model`), or a
    sentence-transformers model; raises `ModelNotFoundError` naming a model that is not
    available locally and `EmbedderError` when the sbert extra is not installed."""
    inner: Embedder
    if s.backend == "minilm":
        from kgreason.embed.minilm import MiniLMEmbedder

        inner = MiniLMEmbedder(s.model, batch_size=s.batch_size, threads=s.threads)
    elif s.backend == "static":
        from kgreason.embed.static import StaticEmbedder

        inner = StaticEmbedder(s.model, batch_size=max(s.batch_size, 1024))
    elif s.backend in ("sentence-transformers", "sbert"):
        try:
            from kgreason.embed.sbert import SentenceTransformerEmbedder, require_sbert

            require_sbert()
        except ImportError as e:
            raise EmbedderError(
                f"embed.backend {s.backend!r} needs torch and sentence-transformers ({e}): "
                f"install kgreason's sbert extra"
            ) from e
        if s.model:
            inner = SentenceTransformerEmbedder(s.model, batch_size=s.batch_size)
        else:
            inner = SentenceTransformerEmbedder.minilm(batch_size=s.batch_size)
    else:  # pragma: no cover - the Literal type forbids it
        raise EmbedderError(f"unknown embed.backend {s.backend!r}")
    return CachedEmbedder(inner, s.cache_size) if s.cache_size > 0 else inner
