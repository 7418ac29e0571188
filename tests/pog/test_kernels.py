"""pog/kernels: each compiled loop gives exactly its numpy reference's output, and the
switches (KGREASON_JIT, size threshold, numba missing) choose the form they say."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from kgreason import jit as kernels
from kgreason.heap import warm_all
from kgreason.pog.arrays.kernels import canon as canon_kernel

numba = pytest.importorskip("numba", reason="numba not installed: the numpy forms are tested")


def test_jit_switch(monkeypatch):
    monkeypatch.setenv("KGREASON_JIT", "0")
    assert kernels.jit_mode() == "off" and not kernels.use_jit(10**9, 1)
    assert warm_all() is False
    monkeypatch.setenv("KGREASON_JIT", "1")
    assert kernels.jit_mode() == "on" and kernels.use_jit(1, 10**9)
    monkeypatch.delenv("KGREASON_JIT")
    assert kernels.jit_mode() == "auto"
    lo = canon_kernel.MIN_ROWS
    monkeypatch.setattr(kernels, "numba_loaded", lambda: True)
    assert not kernels.use_jit(lo - 1, lo)
    assert kernels.use_jit(lo, lo)
    assert kernels.use_jit(1, lo, jit=True)
    # numba not loaded yet: only an input of LOAD_ROWS rows loads it
    monkeypatch.setattr(kernels, "numba_loaded", lambda: False)
    assert not kernels.use_jit(lo, lo)
    assert kernels.use_jit(kernels.LOAD_ROWS, lo)
    assert kernels.use_jit(1, lo, jit=True)


def test_threads_switch(monkeypatch):
    """KGREASON_JIT_THREADS sets the kernel threads; unset: this process's CPUs, at most 4;
    a bad value means one thread (logged), never an error."""
    monkeypatch.setenv("KGREASON_JIT_THREADS", "3")
    assert kernels.threads() == 3
    monkeypatch.setenv("KGREASON_JIT_THREADS", "0")
    assert kernels.threads() == 1
    monkeypatch.setenv("KGREASON_JIT_THREADS", "many")
    assert kernels.threads() == 1
    monkeypatch.delenv("KGREASON_JIT_THREADS")
    monkeypatch.setattr(kernels.os, "sched_getaffinity", lambda _: set(range(16)), raising=False)
    assert kernels.threads() == 4
    monkeypatch.setattr(kernels.os, "sched_getaffinity", lambda _: {0}, raising=False)
    assert kernels.threads() == 1


def test_metaqa_hub_question_does_not_load_numba():
    """The bundled MetaQA KG's largest questions (a genre hub: a ~100k-triple subgraph,
    ~110k member rows) stay on numpy: a one-question process does not load numba."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from kgreason.cli import main\n"
        "sys.argv = ['kgreason', 'ask', 'which films are in the genre [Drama]']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('NUMBA', 'numba' in sys.modules)\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "KGREASON_JIT"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )
    assert "Subgraph:" in out.stdout, out.stderr[-2000:]
    assert "NUMBA False" in out.stdout


def test_without_numba_numpy_answers(monkeypatch):
    """An install where numba cannot be imported: compiled() is None and the kernels still
    answer (numpy), even when the compiled form is asked for."""
    kernels.compiled.cache_clear()
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba -> ImportError
    try:
        loop, sig = canon_kernel.LOOPS[0]
        assert kernels.compiled(loop, sig) is None
        nodes = np.array([3, 4, 3], dtype=np.int64)
        start, one = np.array([0, 1, 2]), np.ones(2, dtype=np.int64)
        got = canon_kernel.differ(nodes, start, np.array([0, 0]), np.array([1, 2]), one, True)
        assert got.tolist() == [True, False]
        assert warm_all() is False
    finally:
        kernels.compiled.cache_clear()


def test_warm_compiles_every_kernel(monkeypatch):
    monkeypatch.delenv("KGREASON_JIT", raising=False)
    assert warm_all() is True


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("drop", [0.0, "start", 0.3, 0.97])
@pytest.mark.parametrize("small", [None, 0, 10**9])
def test_expand_segments_compiled_equals_numpy(monkeypatch, seed, drop, small):
    """fastsegs.expand_segments through kernels.segments gives the numpy form's entries,
    field for field (codes, pool offsets, sizes, hashes, the merged pool); `small`: every
    merged group read back from the bitmap (0), or collected and sorted (10**9)."""
    from tests.pog.synth_graphs import synth_graphs

    from kgreason.pog.arrays.kernels import segments as seg_kernel
    from kgreason.pog.arrays.segments import Pool, expand_segments, segment_table

    monkeypatch.setattr(seg_kernel, "SMALL_ROWS", small)

    g, _, _, _ = synth_graphs(6_000, seed=seed)
    rng = np.random.default_rng(seed)
    hv = rng.integers(0, 2**63, g.n, dtype=np.uint64)
    keep = np.ones(g.n, dtype=bool)
    if drop == "start":
        keep[g.isrc[0]] = False
    else:
        keep = rng.random(g.n) >= drop
    hubs = np.argsort(-np.diff(g.optr))[:5]
    sets = [sorted(set(rng.choice(g.n, size=k, replace=False).tolist())) for k in (1, 3, 40, 300)]
    sets += [sorted(hubs.tolist()), sorted(hubs.tolist()), [], [int(hubs[0])]]
    members = np.array([m for s in sets for m in s], dtype=np.int64)
    owner = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    pool = segment_table(g).pool
    bad_cum = np.concatenate([[0], np.cumsum(~keep[pool])])
    full = expand_segments(g, members, owner, keep, hv, bad_cum).code
    # `only`: a sample of the groups, and codes no group has (the hits of a segment search)
    some = np.unique(np.concatenate([full[::3], full[:4] + 1, [10**12]]))
    for only in (None, some, np.zeros(0, dtype=np.int64)):
        got = {}
        for mode in ("0", "1"):
            monkeypatch.setenv("KGREASON_JIT", mode)
            # a level pool already holding earlier sets: merged sets go after them
            level_pool = Pool(pool)
            level_pool.append(np.arange(seed * 37, dtype=np.int64))
            got[mode] = expand_segments(g, members, owner, keep, hv, bad_cum, level_pool, only)
        a, b = got["0"], got["1"]
        for field in ("code", "a", "ln", "h", "pool"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
        assert a.shared == b.shared
        if only is None:
            assert len(a.code)
        else:
            assert set(a.code.tolist()) == set(full.tolist()) & set(only.tolist())


@pytest.mark.parametrize("seed", range(3))
def test_expand_many_in_threads_equals_one_after_another(monkeypatch, seed):
    """fastsegs.expand_many: jobs run at once in threads leave the pool and the entries
    exactly as running them in turn (each job's merged sets moved down after the
    previous job's, their offsets shifted), and as the numpy form."""
    from tests.pog.synth_graphs import synth_graphs

    from kgreason.pog.arrays.segments import Pool, expand_many, segment_table

    g, _, _, _ = synth_graphs(6_000, seed=seed)
    rng = np.random.default_rng(seed)
    hv = rng.integers(0, 2**63, g.n, dtype=np.uint64)
    keep = rng.random(g.n) >= 0.2
    pool = segment_table(g).pool
    bad_cum = np.concatenate([[0], np.cumsum(~keep[pool])])
    hubs = np.argsort(-np.diff(g.optr))[:6].tolist()
    jobs = []
    for j in range(5):  # owners continue across jobs, as expand_distinct numbers them
        sets = [sorted(set(rng.choice(g.n, size=k, replace=False).tolist())) for k in (2, 50)]
        sets.append(sorted(hubs[j : j + 2]))
        jobs.append(
            (
                np.array([m for x in sets for m in x], dtype=np.int64),
                np.repeat(np.arange(3 * j, 3 * j + 3), [len(x) for x in sets]),
            )
        )
    got = {}
    for mode, n_threads in (("0", 1), ("1", 1), ("1", 3)):
        monkeypatch.setenv("KGREASON_JIT", mode)
        level_pool = Pool(pool)
        level_pool.append(np.arange(seed * 11, dtype=np.int64))
        parts = expand_many(g, jobs, keep, hv, bad_cum, level_pool, n_threads)
        got[mode, n_threads] = (parts, level_pool.view().copy())
    (want, want_pool) = got["0", 1]
    assert len(want_pool) > len(pool) + seed * 11  # some sets were merged
    for key in (("1", 1), ("1", 3)):
        parts, view = got[key]
        np.testing.assert_array_equal(view, want_pool, err_msg=str(key))
        for a, b in zip(want, parts, strict=True):
            for field in ("code", "a", "ln", "h"):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field), str(key))


@pytest.mark.parametrize("seed", range(3))
def test_segment_table_compiled_equals_numpy(monkeypatch, seed):
    """fastsegs.segment_table's runs through kernels.segments: the same table, field for
    field (both CSR directions), on skewed graphs and on a graph with isolated nodes."""
    from tests.pog.synth_graphs import synth_graphs

    from kgreason.pog.arrays.graph import ArrayClusteredGraph
    from kgreason.pog.arrays.segments import segment_table

    g, _, _, _ = synth_graphs(6_000, seed=seed)
    names = np.array([f"e{i}" for i in range(9)], dtype=object)
    h, r, t = (
        np.array(x, dtype=np.int64) for x in ([0, 0, 0, 2, 7], [1, 1, 0, 1, 0], [2, 7, 2, 0, 2])
    )
    small = ArrayClusteredGraph.from_arrays(h, r, t, names, ["a", "b"])
    for graph in (g, small):
        got = {}
        for mode in ("0", "1"):
            monkeypatch.setenv("KGREASON_JIT", mode)
            graph.__dict__.pop("_segments", None)
            got[mode] = segment_table(graph)
        a, b = got["0"], got["1"]
        np.testing.assert_array_equal(a.pool, b.pool)
        for field in ("ptr", "start", "ln", "key", "rcode"):
            for d in (0, 1):
                x, y = getattr(a, field)[d], getattr(b, field)[d]
                assert x.dtype == y.dtype, field
                np.testing.assert_array_equal(x, y, err_msg=f"{field}[{d}]")


@pytest.mark.parametrize("seed", range(4))
def test_canon_differ_compiled_equals_numpy(monkeypatch, seed):
    """kernels.canon.differ (the early-exit comparison) against numpy's, on pairs that are
    equal, differ in the first, a middle or the last element; and setids.canon's answer
    under both forms when every hash collides."""
    from kgreason.pog.arrays.set_ids import canon

    rng = np.random.default_rng(seed)
    sets = [np.sort(rng.choice(1000, rng.integers(1, 30), replace=False)) for _ in range(40)]
    for s in list(sets[:20]):  # copies, and copies changed at one place
        sets.append(s.copy())
        t = s.copy()
        t[rng.integers(0, len(t))] += 1000
        sets.append(np.sort(t))
    nodes = np.concatenate(sets).astype(np.int64)
    lens = np.array([len(s) for s in sets], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    i, j = np.nonzero(lens[:, None] == lens[None, :])
    cnt = lens[i]
    a = canon_kernel.differ(nodes, start, i, j, cnt, jit=False)
    b = canon_kernel.differ(nodes, start, i, j, cnt, jit=True)
    np.testing.assert_array_equal(a, b)
    assert a.any() and not a.all()
    want = [next(k for k in range(len(sets)) if np.array_equal(sets[k], s)) for s in sets]
    for mode in ("0", "1"):
        monkeypatch.setenv("KGREASON_JIT", mode)
        assert canon(nodes, start, lens, np.zeros(len(sets), dtype=np.uint64)).tolist() == want


@pytest.mark.parametrize("seed", range(3))
def test_range_sums_compiled_equals_numpy_and_plain(seed):
    from kgreason.pog.arrays.kernels.sums import range_sums

    rng = np.random.default_rng(seed)
    values = rng.integers(0, 10**6, 500)
    nodes = rng.integers(0, 500, 3000)
    a = rng.integers(0, 2900, 200)
    ln = rng.integers(0, 100, 200)
    ln[:5] = 0  # empty ranges sum to 0
    want = [int(values[nodes[x : x + k]].sum()) for x, k in zip(a, ln, strict=True)]
    for jit in (False, True):
        assert range_sums(values, nodes, a, ln, jit=jit).tolist() == want
    z = np.zeros(0, dtype=np.int64)
    assert range_sums(values, nodes, z, z, jit=True).tolist() == []


@pytest.mark.parametrize("seed", range(3))
def test_sets_holding_compiled_equals_numpy_and_plain(seed):
    from kgreason.pog.arrays.kernels.sums import sets_holding

    rng = np.random.default_rng(seed)
    pool = np.concatenate(
        [np.sort(rng.choice(60, rng.integers(0, 12), replace=False)) for _ in range(80)]
    )
    bounds = np.concatenate([[0], np.cumsum(rng.integers(0, 12, 79))])
    a = np.minimum(bounds, len(pool)).astype(np.int64)
    ln = np.zeros(len(a), dtype=np.int64)  # sets over runs of the pool that are sorted
    for k in range(len(a)):
        run = pool[a[k] :]
        n_sorted = 1 + int(np.argmax(np.append(np.diff(run) <= 0, True))) if len(run) else 0
        ln[k] = min(n_sorted, rng.integers(0, 12))
    for t in (0, 7, 33, 59, 99):
        want = [t in pool[x : x + k].tolist() for x, k in zip(a, ln, strict=True)]
        for jit in (False, True):
            assert sets_holding(pool, a, ln, t, jit=jit).tolist() == want


def test_read_only_inputs_are_copied_not_refused():
    """numba's explicit signatures reject read-only arrays (a memory map, a frozen table);
    the compiled loop then runs on writable copies instead of failing the question."""
    nodes = np.array([3, 4, 3], dtype=np.int64)
    nodes.flags.writeable = False
    start = np.array([0, 1, 2], dtype=np.int64)
    start.flags.writeable = False
    one = np.ones(2, dtype=np.int64)
    got = canon_kernel.differ(nodes, start, np.array([0, 0]), np.array([1, 2]), one, jit=True)
    assert got.tolist() == [True, False]
    with pytest.raises(TypeError):  # other mismatches still raise
        loop = kernels.compiled(*canon_kernel.LOOPS[0])
        assert loop is not None
        loop(nodes.astype(np.float64), start, start, start, start)


def test_prefix_hashes_compiled_equals_numpy_and_wraps():
    """kernels.segments.prefix_hashes (segment_hashes' one pass) against numpy's gather and
    cumsum, with hashes near 2**64 so the sums wrap, on a pool with repeats."""
    from kgreason.pog.arrays.kernels import segments as seg_kernel

    rng = np.random.default_rng(11)
    hv = rng.integers(2**63, 2**64 - 1, 500, dtype=np.uint64, endpoint=True)
    pool = rng.integers(0, 500, 20_000).astype(np.int64)
    got = seg_kernel.prefix_hashes(pool, hv)
    if got is None:
        pytest.skip("numba not available")
    want = np.zeros(len(pool) + 1, dtype=np.uint64)
    np.cumsum(hv[pool], out=want[1:])
    assert got.dtype == np.uint64
    np.testing.assert_array_equal(got, want)
    assert seg_kernel.prefix_hashes(np.zeros(0, dtype=np.int64), hv).tolist() == [0]
