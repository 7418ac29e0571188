from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgreason.embed import CachedEmbedder, EmbedderError, ModelNotFoundError, build_embedder
from kgreason.embed.sbert import minilm_path
from kgreason.embed.settings import EmbedSettings
from kgreason.embed.static import StaticEmbedder, vendored_static_path

from .conftest import no_network


def test_static_backend_is_cached():
    emb = build_embedder(EmbedSettings(backend="static", cache_size=10))
    assert isinstance(emb, CachedEmbedder) and isinstance(emb.inner, StaticEmbedder)
    assert emb.embed(["a", "b"]).shape == (2, emb.dim)


def test_cache_size_zero_returns_backend_itself():
    emb = build_embedder(EmbedSettings(backend="static", cache_size=0))
    assert isinstance(emb, StaticEmbedder)


def test_static_backend_with_local_dir(static):
    emb = build_embedder(EmbedSettings(backend="static", model=str(vendored_static_path())))
    np.testing.assert_allclose(emb.embed(["film"]), static.embed(["film"]), atol=1e-6)


@pytest.mark.parametrize("backend", ["static", "sentence-transformers"])
def test_missing_model_path_is_named(tmp_path: Path, backend):
    missing = str(tmp_path / "no" / "such-model")
    with pytest.raises(ModelNotFoundError, match=r"no/such-model.*does not exist") as e:
        build_embedder(EmbedSettings(backend=backend, model=missing))
    assert e.value.model == missing
    assert isinstance(e.value, FileNotFoundError)


def test_static_dir_without_model_files(tmp_path: Path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelNotFoundError, match=r"missing model\.safetensors, tokenizer\.json"):
        build_embedder(EmbedSettings(backend="static", model=str(tmp_path)))


def test_uncached_hub_name_fails_without_network():
    attempts: list = []
    name = "sentence-transformers/all-mpnet-base-v2"
    with no_network(attempts), pytest.raises(ModelNotFoundError, match=name):
        build_embedder(EmbedSettings(backend="sentence-transformers", model=name))
    assert attempts == []


def test_sentence_transformers_needs_model_and_minilm_refuses_one():
    with pytest.raises(EmbedderError, match=r"embed\.model is required"):
        build_embedder(EmbedSettings(backend="sentence-transformers"))
    with pytest.raises(EmbedderError, match="not used by backend 'minilm'"):
        build_embedder(EmbedSettings(backend="minilm", model="x"))


def test_sentence_transformers_local_dir_matches_minilm(minilm):
    """Any sentence-transformers directory can be configured; here the bundled one."""
    emb = build_embedder(
        EmbedSettings(backend="sentence-transformers", model=str(minilm_path()), cache_size=0)
    )
    assert emb.name == "model" and emb.dim == 384
    np.testing.assert_allclose(emb.embed(["kismet"]), minilm.embed(["kismet"]), atol=1e-5)
