"""MiniLM's batches on threads (embed/minilm.py) and the BLAS limit they run under
(embed/blas.py): the same vectors as one batch at a time, one BLAS thread while the batches
run and the count restored when the last caller leaves (concurrent and interleaved callers
too), one batch at a time where BLAS cannot be limited, errors passed on."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import kgreason.embed.minilm as minilm_mod
from kgreason.embed.blas import BlasThreads, _Lib, threaded_blas_libs
from kgreason.embed.factory import build_embedder
from kgreason.embed.minilm import MiniLMEmbedder, default_threads
from kgreason.embed.settings import EmbedSettings

#: texts of many lengths: ~40 batches of <= 512 padded tokens, so several run at once
TEXTS = [
    "{Once Were Warriors} -> directed_by -> {Lee Tamahori}" + " and more" * (i % 23) + f" #{i}"
    for i in range(240)
]


def blas_threads() -> list[int]:
    """The thread counts of the BLAS libraries the process's coordinator holds (numpy's;
    torch, once the sbert tests load it, brings its own, which it finds later or never)."""
    from threadpoolctl import threadpool_info

    minilm_mod.BLAS.usable()
    held = {lib.path for lib in minilm_mod.BLAS._libs or []}
    return [d["num_threads"] for d in threadpool_info() if d.get("filepath") in held]


@pytest.fixture(scope="module")
def serial() -> np.ndarray:
    return MiniLMEmbedder(threads=1).embed(TEXTS)


def test_threads_give_the_vectors_of_one_batch_at_a_time(serial):
    e = MiniLMEmbedder(threads=3)
    assert len(list(e._batches([x.ids for x in e._tok.encode_batch(TEXTS)]))) >= 6
    got = e.embed(TEXTS)
    np.testing.assert_allclose(got, serial, atol=1e-6)
    # rows land where their texts are: a shuffled input gives the shuffled vectors
    perm = np.random.default_rng(0).permutation(len(TEXTS))
    np.testing.assert_allclose(e.embed([TEXTS[i] for i in perm]), serial[perm], atol=1e-6)


def threaded_blas() -> bool:
    return bool(blas_threads()) and max(blas_threads()) > 1


def test_blas_runs_one_thread_while_the_batches_run_and_is_restored(monkeypatch):
    if not threaded_blas():
        pytest.skip("numpy's BLAS is not threaded here (threadpoolctl sees no BLAS > 1 thread)")
    before = blas_threads()
    seen: list[tuple[str, list[int]]] = []
    real = minilm_mod.encode

    def spy(ids, mask, w):
        seen.append((threading.current_thread().name, blas_threads()))
        return real(ids, mask, w)

    monkeypatch.setattr(minilm_mod, "encode", spy)
    MiniLMEmbedder(threads=2).embed(TEXTS[:120])
    assert len(seen) >= 2
    assert all(name.startswith("kgreason-embed") and max(n) == 1 for name, n in seen), seen
    assert blas_threads() == before
    seen.clear()  # one batch at a time: on the calling thread, BLAS threaded as it was
    MiniLMEmbedder(threads=1).embed(TEXTS[:120])
    assert seen and all(n == before and not name.startswith("kgreason") for name, n in seen)


class FakeBlas:
    """A process's BLAS thread count, as the coordinator sees it."""

    def __init__(self, n: int = 4):
        self.n = n
        self.sets: list[int] = []

    def lib(self) -> _Lib:
        def set_(k: int) -> None:
            self.sets.append(k)
            self.n = k

        return _Lib("fake", lambda: self.n, set_)


def test_interleaved_callers_restore_the_count_once_the_last_leaves():
    """The attack on a save-and-restore per caller: A saves 4 and sets 1, B saves 1, A
    restores 4 while B runs, B restores 1 and leaves BLAS on one thread for good."""
    fake = FakeBlas(4)
    coord = BlasThreads(lambda: [fake.lib()])
    a, b = coord.one_thread(), coord.one_thread()
    a.__enter__()
    assert fake.n == 1
    b.__enter__()
    a.__exit__(None, None, None)
    assert fake.n == 1  # B still runs
    b.__exit__(None, None, None)
    assert fake.n == 4 and fake.sets == [1, 4]
    with coord.one_thread():  # and again from scratch
        assert fake.n == 1
    assert fake.n == 4


def test_concurrent_embeds_leave_blas_as_it_was():
    if not threaded_blas():
        pytest.skip("numpy's BLAS is not threaded here")
    before = blas_threads()
    e = MiniLMEmbedder(threads=2)
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            e.embed(TEXTS[k * 40 : k * 40 + 120])
        except BaseException as exc:  # (reported below)
            errors.append(exc)

    ts = [threading.Thread(target=run, args=(k,)) for k in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not errors and blas_threads() == before


def test_without_a_blas_limit_batches_run_one_at_a_time(monkeypatch, serial):
    names: list[str] = []
    real = minilm_mod.encode

    def spy(ids, mask, w):
        names.append(threading.current_thread().name)
        return real(ids, mask, w)

    monkeypatch.setattr(minilm_mod, "encode", spy)
    e = MiniLMEmbedder(threads=4)
    e.blas = BlasThreads(lambda: None)
    got = e.embed(TEXTS)
    assert names and set(names) == {threading.current_thread().name}
    np.testing.assert_allclose(got, serial, atol=1e-6)
    with pytest.raises(RuntimeError, match="one thread"), e.blas.one_thread():
        pass


def test_blas_libraries_without_known_setters_are_reported(monkeypatch):
    import threadpoolctl

    fake = [{"user_api": "blas", "internal_api": "flexiblas", "num_threads": 4, "filepath": "x"}]
    monkeypatch.setattr(threadpoolctl, "threadpool_info", lambda: fake)
    assert threaded_blas_libs() is None
    fake[0]["num_threads"] = 1  # a BLAS on one thread needs no limit
    assert threaded_blas_libs() == []
    fake.append({"user_api": "openmp", "internal_api": "openmp", "num_threads": 8})
    assert threaded_blas_libs() == []


def test_numpys_blas_is_found_with_working_setters():
    if not threaded_blas():
        pytest.skip("numpy's BLAS is not threaded here")
    libs = threaded_blas_libs()
    assert libs, "numpy's threaded BLAS was not found"
    from threadpoolctl import threadpool_info

    def count(path: str) -> list[int]:
        return [d["num_threads"] for d in threadpool_info() if d.get("filepath") == path]

    for lib in libs:
        n = lib.get()
        try:
            lib.set(1)
            assert count(lib.path) == [1]
        finally:
            lib.set(n)
        assert count(lib.path) == [n]


def test_an_error_in_a_batch_is_raised_and_blas_restored(monkeypatch):
    before = blas_threads()
    real = minilm_mod.encode
    calls = []

    def fail_third(ids, mask, w):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("batch 3 broke")
        return real(ids, mask, w)

    monkeypatch.setattr(minilm_mod, "encode", fail_third)
    e = MiniLMEmbedder(threads=2)
    with pytest.raises(RuntimeError, match="batch 3 broke"):
        e.embed(TEXTS)
    assert blas_threads() == before and e.blas._users == 0
    n_batches = len(list(e._batches([x.ids for x in e._tok.encode_batch(TEXTS)])))
    assert len(calls) < n_batches  # the batches not begun were dropped, not encoded


def test_threads_setting_reaches_the_embedder_and_is_checked():
    assert build_embedder(EmbedSettings(threads=3, cache_size=0)).threads == 3
    assert build_embedder(EmbedSettings(cache_size=0)).threads == default_threads() >= 1
    with pytest.raises(ValueError, match="threads"):
        MiniLMEmbedder(threads=-1)
    with pytest.raises(ValueError):
        EmbedSettings(threads=-2)
