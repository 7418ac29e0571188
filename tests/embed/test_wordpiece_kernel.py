"""embed/kernels/wordpiece.py: the compiled tokenizing and pooling equals the reference
(the `tokenizers` tokenizer and wordpool's sums) bit for bit, on the vendored model, on texts
chosen to break it (punctuation, digits, case, [UNK] pieces, pre-tokens past WordPiece's
100 characters, empty words), and leaves to the reference what it cannot do the same."""

from __future__ import annotations

import random
import string

import numpy as np
import pytest

from kgreason.embed.kernels.wordpiece import (
    WordPieceKernel,
    bert_spec,
    build_trie,
    warm_inputs,
)

from .test_wordpool import TRICKY

pytest.importorskip("numba")


def kernel_and_reference(static, texts):
    pooler = static._pooler
    got = pooler.word_sums(texts, jit=True)
    want = pooler.reference_sums(texts)
    return got, want


def assert_same(got, want):
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def random_texts(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + string.punctuation + "    "
    words = ["type13_819683,", "type1.rel901.type16", "->", "<-", "{Nijmegen}", "(+12", "more)"]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rnd.randint(0, 12)):
            if rnd.random() < 0.4:
                parts.append(rnd.choice(words))
            else:
                parts.append("".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 14))))
        out.append(" ".join(parts))
    return out


def test_the_vendored_model_has_the_kernel(static):
    assert static._pooler.kernel is not None


def test_bit_for_bit_on_random_ascii(static):
    texts = random_texts(3000, 0)
    got, want = kernel_and_reference(static, texts)
    assert_same(got, want)
    assert (got[1] > 0).sum() > 2500  # texts with tokens, not a batch of empties


def test_a_batch_split_over_threads_gives_the_same_sums(static, monkeypatch):
    import kgreason.embed.kernels.wordpiece as wp

    texts = random_texts(500, 1)
    want = static._pooler.reference_sums(texts)
    monkeypatch.setattr(wp, "PART_CHARS", 300)
    monkeypatch.setattr(wp, "threads", lambda: 3)
    calls = []
    real = wp.WordPieceKernel._call
    monkeypatch.setattr(
        wp.WordPieceKernel, "_call", lambda self, *a: calls.append(1) or real(self, *a)
    )
    got = static._pooler.word_sums(texts, jit=True)
    assert len(calls) == 3
    assert_same(got, want)


def test_bit_for_bit_on_tricky_texts_and_long_pieces(static):
    texts = [
        *TRICKY,
        "a" * 100,
        "a" * 101,
        "b" * 99 + "!" + "c" * 101,
        "  double  spaces  ",
        "ZZZZqqqqxxxx##ab ## #",
        "1234567890" * 5,
    ]
    got, want = kernel_and_reference(static, texts)
    assert_same(got, want)


def test_a_batch_of_only_kernel_texts_never_calls_the_tokenizer(static, monkeypatch):
    pooler = static._pooler

    def boom(*a, **k):
        raise AssertionError("the reference tokenizer was called")

    monkeypatch.setattr(pooler, "reference_sums", boom)
    _, tokens, chars = pooler.word_sums(["{type16_320934} <- a.b.c <- X"], jit=True)
    assert tokens[0] > 5 and chars[0] == 29
    with pytest.raises(AssertionError, match="reference tokenizer"):
        pooler.word_sums(["café"], jit=True)  # non-ASCII goes to the reference


def test_small_batches_use_the_reference_unless_forced(static, monkeypatch):
    pooler = static._pooler
    monkeypatch.setenv("KGREASON_JIT", "auto")
    assert pooler.kernel.usable(["short text"]) is None
    monkeypatch.setenv("KGREASON_JIT", "0")
    assert pooler.kernel.usable(["x" * 100_000]) is None


def test_trie_longest_match_and_continuations():
    t = build_trie({"[UNK]": 0, "ab": 1, "abc": 2, "##c": 3, "##cd": 4, "é": 5}, "##")
    assert t.term.max() == 4  # the non-ASCII piece is left out
    spec = bert_spec({"[UNK]": 0, "ab": 1, "abc": 2, "##c": 3, "##cd": 4})
    emb = np.eye(5, dtype=np.int8)
    k = WordPieceKernel(spec, emb, None, None)
    loop = k.usable(["x"], jit=True)
    # "abcd": abc + ##d? no ##d -> the whole word is [UNK]; "abccd": abc + ##cd
    sums, raw = k.pool(loop, ["abcd", "abccd", "ab,c"])
    assert raw.tolist() == [1, 2, 3]
    np.testing.assert_array_equal(sums[0], 0)
    np.testing.assert_array_equal(sums[1], [0, 0, 1, 0, 1])
    np.testing.assert_array_equal(sums[2], [0, 1, 0, 0, 0])  # "," and "c" alone: [UNK]s


def test_warm_inputs():
    assert warm_inputs()
