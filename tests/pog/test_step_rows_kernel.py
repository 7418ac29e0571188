"""pog/arrays/kernels/rows.py: a level of path vectors in one compiled pass equals numpy's
((parent + arrow) + set) bit for bit, and TextTree.vectors gives the same vectors with the
loop as without it."""

from __future__ import annotations

import numpy as np
import pytest

from kgreason.pog.arrays.kernels.rows import step_rows, warm_inputs

pytest.importorskip("numba")


def test_same_bits_as_numpy():
    rng = np.random.default_rng(3)
    prev = rng.standard_normal((300, 64)).astype(np.float32) * 1e3
    pieces = rng.standard_normal((200, 64)).astype(np.float32)
    par, a, x = rng.integers(0, 300, 5000), rng.integers(0, 200, 5000), rng.integers(0, 200, 5000)
    want = step_rows(prev, par, pieces, a, x, jit=False)
    got = step_rows(prev, par, pieces, a, x, jit=True)
    assert got.dtype == np.float32 and got.shape == (5000, 64)
    np.testing.assert_array_equal(got, want)
    # the association matters in float32: (p + a) + x is not p + (a + x) everywhere
    assert not np.array_equal(prev[par] + (pieces[a] + pieces[x]), want)


def test_warm_inputs():
    assert warm_inputs()
