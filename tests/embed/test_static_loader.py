"""embed/static.py loads the vendored static model without model2vec's from_pretrained (and
the Hugging Face model-card code it imports): the same model, attribute for attribute and
vector for vector; a folder with a model card still goes through from_pretrained."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np

from kgreason.embed.static import StaticEmbedder, _load_plain, vendored_static_path

from .test_wordpool import TRICKY


def test_same_model_as_from_pretrained():
    from model2vec import StaticModel

    ours = StaticEmbedder()._model
    ref = StaticModel.from_pretrained(vendored_static_path(), normalize=True, force_download=False)
    for name in ("normalize", "max_length", "base_model_name", "language", "config", "dim"):
        assert getattr(ours, name) == getattr(ref, name), name
    assert ours.unk_token_id == ref.unk_token_id
    assert ours.median_token_length == ref.median_token_length
    np.testing.assert_array_equal(ours.embedding, ref.embedding)
    np.testing.assert_array_equal(ours.weights, ref.weights)
    assert ours.tokenizer.to_str() == ref.tokenizer.to_str()
    np.testing.assert_array_equal(ours.encode(TRICKY), ref.encode(TRICKY))


def test_no_model_card_code_is_imported():
    code = (
        "import sys\n"
        "from kgreason.embed.static import StaticEmbedder\n"
        "StaticEmbedder().embed(['a b'])\n"
        "print(sorted(m for m in sys.modules if m.startswith(('model2vec.persistence',"
        " 'huggingface_hub.repocard'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_folder_with_a_model_card_uses_from_pretrained(tmp_path):
    folder = tmp_path / "m"
    shutil.copytree(vendored_static_path(), folder)
    assert _load_plain(folder, lambda **kw: kw)["base_model_name"] is None
    (folder / "README.md").write_text("---\nbase_model: x\nlanguage: [en]\n---\n")
    assert _load_plain(folder, object) is None
    emb = StaticEmbedder(folder)
    assert emb._model.base_model_name == "x"
    np.testing.assert_allclose(emb.embed(["a b"]), StaticEmbedder().embed(["a b"]))
