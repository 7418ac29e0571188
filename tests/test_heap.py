"""kgreason.heap: what is alive when the server starts serving is frozen, later garbage is
still collected."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace


def test_freeze_warm_state_freezes_and_later_cycles_are_still_collected():
    # in a child process: freezing is process-wide and must not leak into the test run
    code = """
import gc, weakref
from kgreason.heap import freeze_warm_state
class Node:
    pass
warm = Node(); warm.self = warm  # a cycle alive at startup
n = freeze_warm_state()
assert n > 0 and gc.get_freeze_count() == n
later = Node(); later.self = later  # garbage made after startup
ref = weakref.ref(later)
del later
gc.collect()
assert ref() is None, "a cycle made after freezing was not collected"
print("ok", n)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok ")


def test_serve_freezes_before_running(monkeypatch):
    import kgreason
    from kgreason.server import run

    calls: list[str] = []

    class FakeServer:
        announce = None

        def run(self, sockets=None) -> None:  # type: ignore[no-untyped-def]
            calls.append(f"run {sockets}")

    monkeypatch.setattr(run, "uvicorn_server", lambda *a, **k: FakeServer())
    monkeypatch.setattr(kgreason, "freeze_warm_state", lambda: calls.append("freeze") or 0)
    monkeypatch.setattr(kgreason, "warm_kernels", lambda kg: calls.append(f"warm {kg}") or False)
    service = SimpleNamespace(kg="the-kg")
    run.serve(service, object())  # type: ignore[arg-type]
    assert calls == ["warm the-kg", "freeze", "run None"]
    calls.clear()  # a --workers worker serves its inherited socket
    run.serve(service, object(), sockets=["the-socket"])  # type: ignore[arg-type, list-item]
    assert calls == ["warm the-kg", "freeze", "run ['the-socket']"]


def test_warm_kernels_only_for_large_local_stores(tmp_path, monkeypatch):
    """PoG's compiled kernels are warmed for a local store from WARM_KERNELS_TRIPLES
    triples (numba is then loaded before the first question), never for a small store or a
    KG that is not a local store (they never reach the kernels' row thresholds)."""
    from kgreason import heap
    from kgreason.kg.loaders import Source
    from kgreason.kg.store import StoreKG, build_store

    tsv = tmp_path / "kg.tsv"
    tsv.write_text("".join(f"e{i}\tr{i % 3}\te{i + 1}\n" for i in range(50)))
    build_store([Source(tsv)], tmp_path / "store")
    kg = StoreKG(tmp_path / "store")
    assert heap.warm_kernels(object()) is False
    assert heap.warm_kernels(kg) is False  # 50 triples
    monkeypatch.setattr(heap, "WARM_KERNELS_TRIPLES", 50)
    monkeypatch.delenv("KGREASON_JIT", raising=False)
    assert heap.warm_kernels(kg) is True
    monkeypatch.setenv("KGREASON_JIT", "0")
    assert heap.warm_kernels(kg) is False


def test_the_bundled_store_is_not_warmed():
    """The default KG (bundled MetaQA, 128k triples) never reaches a kernel's threshold:
    `kgreason serve` on it does not load numba."""
    from kgreason import heap
    from kgreason.kg.bundled import bundled_store_path
    from kgreason.kg.store import StoreKG

    kg = StoreKG(bundled_store_path())
    try:
        assert 0 < int(kg.manifest.counts["triples"]) < heap.WARM_KERNELS_TRIPLES
        assert heap.warm_kernels(kg) is False
    finally:
        kg.close()
