"""embed.wordpool: the static model's vectors pooled word by word equal model2vec's own
`encode` (the reference) on texts chosen to break a word-level decomposition: whitespace
other than spaces, control and zero-width characters, accents split by a space, CJK,
punctuation runs, [UNK]-only words, literal special tokens, and texts model2vec truncates."""

from __future__ import annotations

import copy
import json
import shutil
import types

import numpy as np
import pytest

from kgreason.embed.static import StaticEmbedder, vendored_static_path
from kgreason.embed.wordpool import pooler_for, segment_sums

TRICKY = [
    "",
    " ",
    "   leading and trailing   ",
    "{Nijmegen} -> location.location.nearby_airports -> {Weeze Airport, Germany}",
    "{type1_738823} <- type0.rel600.type1 <- {type0_377459} (+12 more)",
    "tabs\tand\nnewlines\r\nand\x0bvertical\x0cfeeds",
    "no\u00a0break\u2003em\u3000ideographic spaces",
    "zero\u200bwidth\u200dand\ufeffbom",
    "control\x00\x01\x1c\x1f\x7fchars",
    "accent e\u0301 and a \u0301lone combining mark",
    "Ångström Øresund naïve café Ελληνικά русский",
    "中文字符 and 日本語のテキスト mixed",
    ",,,;;;!!!???...---",
    "😀🎉 emoji only 🧪",
    "x" * 150 + " a word longer than WordPiece's 100 characters",
    "literal [MASK] [PAD] [UNK] [CLS] [SEP] and glued[MASK]tokens",
    "UPPER lower MiXeD",
    "a,b;c:d/e\\f|g",
]


def reference(emb: StaticEmbedder, texts: list[str]) -> np.ndarray:
    out = emb._encode(texts)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


def test_the_vendored_model_is_pooled_by_words(static):
    assert static._pooler is not None


def test_same_vectors_as_model2vec_on_tricky_texts(static):
    got = static.embed(TRICKY)
    want = reference(static, TRICKY)
    np.testing.assert_allclose(got, want, atol=2e-6)
    zero = np.linalg.norm(want, axis=1) == 0  # no known token: zero in both
    assert zero[0] and zero[1]
    np.testing.assert_array_equal(np.linalg.norm(got, axis=1) == 0, zero)


def test_texts_model2vec_truncates_are_pooled_by_model2vec(static):
    many_tokens = "a, " * 300  # 600 tokens in 900 characters: truncated to 512 tokens
    many_chars = "word " * 700  # 3,500 characters: cut to max_length * median token length
    texts = [many_tokens, many_chars, "a short one"]
    assert static._pooler is not None
    whole = static._pooler.tokenizer.encode(many_tokens, add_special_tokens=False)
    assert len(whole.ids) > static._model.max_length
    assert len(many_chars) > static._pooler.max_chars
    np.testing.assert_allclose(static.embed(texts), reference(static, texts), atol=2e-6)
    # the fallback matters: a pooler that never hands texts to model2vec differs on both
    blind = copy.copy(static._pooler)
    blind.max_tokens = blind.max_chars = None
    for text in (many_tokens + "zebra " * 50, many_chars + "zebra " * 50):
        ignored = blind.sums([text])
        assert not np.allclose(ignored / np.linalg.norm(ignored), reference(static, [text]))


def test_a_text_does_not_depend_on_its_batch(static):
    batch = static.embed(TRICKY + TRICKY[::-1])
    for i, t in enumerate(TRICKY):
        np.testing.assert_array_equal(static.embed([t])[0], batch[i])


def test_path_texts_rank_as_model2vec_ranks_them(static):
    rng = np.random.default_rng(0)
    names = [f"Entity {i} of {w}" for i, w in enumerate(["Paris", "Lyon", "Kyoto", "Oslo"] * 50)]
    rels = [f"film.film.rel_{i}" for i in range(40)]
    texts = [
        f"{{{rng.choice(names)}}} -> {rng.choice(rels)} -> {{{rng.choice(names)}, "
        f"{rng.choice(names)}}} <- {rng.choice(rels)} <- {{{rng.choice(names)}}}"
        for _ in range(400)
    ]
    q = static.embed(["which film is about Kyoto"])[0]
    got, want = static.embed(texts) @ q, reference(static, texts) @ q
    np.testing.assert_allclose(got, want, atol=2e-6)
    assert np.array_equal(
        np.argsort(-got, kind="stable")[:50], np.argsort(-want, kind="stable")[:50]
    )


def test_segment_sums():
    table = np.arange(12, dtype=np.float32).reshape(6, 2)
    ids = np.array([5, 0, 1, 2, 4, 4], dtype=np.int64)
    lens = np.array([1, 0, 3, 2], dtype=np.int64)
    want = np.array([table[5], [0, 0], table[0] + table[1] + table[2], 2 * table[4]])
    np.testing.assert_array_equal(segment_sums(table, ids, lens), want)
    assert segment_sums(table, ids[:0], np.zeros(3, dtype=np.int64)).tolist() == [[0, 0]] * 3


@pytest.mark.parametrize(
    ("part", "value"),
    [
        ("pre_tokenizer", {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}),
        ("pre_tokenizer", {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}),
        ("normalizer", {"type": "Replace", "pattern": {"String": " "}, "content": "_"}),
    ],
)
def test_tokenizers_that_join_words_keep_model2vec_pooling(tmp_path, part, value):
    folder = tmp_path / "model"
    shutil.copytree(vendored_static_path(), folder)
    spec = json.loads((folder / "tokenizer.json").read_text())
    spec[part] = value
    (folder / "tokenizer.json").write_text(json.dumps(spec))
    emb = StaticEmbedder(folder)
    assert emb._pooler is None
    texts = ["{Nijmegen} -> location.location.nearby_airports -> {Weeze}", "two words"]
    np.testing.assert_allclose(emb.embed(texts), reference(emb, texts), atol=1e-6)


def test_an_added_token_with_a_space_keeps_model2vec_pooling(static):
    from tokenizers import Tokenizer

    model = static._model
    tok = Tokenizer.from_str(model.tokenizer.to_str())
    fake = types.SimpleNamespace(
        tokenizer=tok,
        embedding=model.embedding,
        median_token_length=model.median_token_length,
        max_length=model.max_length,
    )
    assert pooler_for(fake, static._encode) is not None
    tok.add_special_tokens(["new york"])  # one token across two words
    assert pooler_for(fake, static._encode) is None


def test_segment_sums_in_blocks(monkeypatch):
    """Batches larger than a block give the sums of one block."""
    import kgreason.embed.wordpool as wp

    rng = np.random.default_rng(1)
    table = rng.normal(size=(50, 4)).astype(np.float32)
    lens = rng.integers(0, 9, size=300)
    ids = rng.integers(0, 50, size=int(lens.sum()))
    whole = segment_sums(table, ids, lens)
    monkeypatch.setattr(wp, "BLOCK", 7)
    np.testing.assert_array_equal(segment_sums(table, ids, lens), whole)
    starts = np.cumsum(lens) - lens
    want = [
        table[ids[a : a + n]].sum(axis=0) if n else np.zeros(4)
        for a, n in zip(starts, lens, strict=True)
    ]
    np.testing.assert_allclose(whole, np.array(want), atol=1e-5)
