from __future__ import annotations

import numpy as np

from kgreason.embed.base import cosine_topk


def _unit(rows) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_best_first_with_scores():
    m = _unit([[1, 0], [0, 1], [1, 1], [-1, 0]])
    idx, scores = cosine_topk(np.array([1.0, 0.0], dtype=np.float32), m, 3)
    assert idx.tolist() == [0, 2, 1]
    np.testing.assert_allclose(scores, [1.0, np.sqrt(0.5), 0.0], atol=1e-6)
    assert idx.dtype == np.int64 and scores.dtype == np.float32


def test_ties_broken_by_row_index():
    m = _unit([[0, 1], [1, 0], [0, 1], [1, 0], [1, 0]])
    idx, _ = cosine_topk(np.array([1.0, 0.0], dtype=np.float32), m, 4)
    assert idx.tolist() == [1, 3, 4, 0]


def test_deterministic_over_repeats_and_shuffles():
    rng = np.random.default_rng(0)
    m = _unit(rng.normal(size=(500, 16)))
    m = np.vstack([m, m])  # every row duplicated: 500 exact ties
    q = m[7]
    first = cosine_topk(q, m, 50)
    for _ in range(3):
        again = cosine_topk(q, m, 50)
        np.testing.assert_array_equal(first[0], again[0])
    # tied pairs appear in index order
    pos = {int(i): n for n, i in enumerate(first[0])}
    assert pos[7] < pos[507]


def test_k_larger_than_rows_zero_and_empty():
    m = _unit([[1, 0], [0, 1]])
    q = np.array([0.0, 1.0], dtype=np.float32)
    assert cosine_topk(q, m, 10)[0].tolist() == [1, 0]
    assert cosine_topk(q, m, 0)[0].shape == (0,)
    idx, scores = cosine_topk(q, np.zeros((0, 2), dtype=np.float32), 5)
    assert idx.shape == (0,) and scores.shape == (0,)


def test_with_real_embedder(static):
    paths = [
        "Kismet -> film.film.language -> English",
        "Kismet -> film.film.directed_by -> William Dieterle",
        "Kismet -> film.film.starring -> Marlene Dietrich",
    ]
    q = static.embed(["who directed Kismet"])[0]
    idx, _ = cosine_topk(q, static.embed(paths), 1)
    assert idx.tolist() == [1]
