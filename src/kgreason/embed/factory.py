"""Build the configured embedder (wrapped in the string cache) from `EmbedSettings`."""

from __future__ import annotations

from kgreason.embed.base import Embedder
from kgreason.embed.cache import CachedEmbedder
from kgreason.embed.errors import EmbedderError
from kgreason.embed.settings import EmbedSettings


def build_embedder(s: EmbedSettings) -> Embedder:
    """MiniLM (bundled), the vendored static model (or `s.model`), or any sentence-transformers
    model in `s.model`; raises `ModelNotFoundError` naming a model that is not available locally."""
    inner: Embedder
    if s.backend == "minilm":
        from kgreason.embed.sbert import SentenceTransformerEmbedder

        if s.model is not None:
            raise EmbedderError(
                f"embed.model={s.model!r} is not used by backend 'minilm' "
                "(use backend 'sentence-transformers' or 'static' for a custom model)"
            )
        inner = SentenceTransformerEmbedder.minilm(batch_size=s.batch_size)
    elif s.backend == "static":
        from kgreason.embed.static import StaticEmbedder

        inner = StaticEmbedder(s.model, batch_size=max(s.batch_size, 1024))
    elif s.backend == "sentence-transformers":
        from kgreason.embed.sbert import SentenceTransformerEmbedder

        if not s.model:
            raise EmbedderError(
                "embed.model is required when embed.backend is 'sentence-transformers'"
            )
        inner = SentenceTransformerEmbedder(s.model, batch_size=s.batch_size)
    else:  # pragma: no cover - the Literal type forbids it
        raise EmbedderError(f"unknown embed.backend {s.backend!r}")
    return CachedEmbedder(inner, s.cache_size) if s.cache_size > 0 else inner
