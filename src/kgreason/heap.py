"""Warm state out of the cyclic garbage collector's reach, for processes that answer many
questions after loading (`kgreason serve`, `kgreason mcp`; bench/pog_scale.py does the same
by hand, so that it can also run older checkouts).

Why: a full collection walks every tracked object. After importing kgreason and
opening a KG that is ~50k objects, 20-30 ms on the bench machine, and the allocations of a
large question's path search trigger one inside the paths stage (43-61 ms measured in four
10M questions). `gc.freeze()` moves the objects alive now to a permanent generation, so
later collections walk only what was allocated since. Frozen objects are never collected,
which is what warm state (the KG, the embedder, imported modules) is for anyway.

`warm_kernels(kg)` compiles (or loads from numba's disk cache) PoG's graph-stage kernels
(kgreason.jit) when the KG is a local store large enough to use them, so the first
large question of a server does not pay 0.3-0.8 s (4-11 s uncached) and ~150 MB of numba
loading mid-request.

`kernel_cache()` tells which kernels numba's disk cache holds without compiling any
(`kgreason doctor`); `warm_built_store()` is `kgreason kg build`'s last step, so the
one-time compile is paid by the build, not by the first question.

These are called by entry points only, never by library code: freezing and warming are the
application's decisions.
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Any

#: local stores from this many triples warm the kernels. The bundled MetaQA store (128k)
#: never reaches a kernel's row threshold; the store walk's kernel starts at 500k edges,
#: and at 1M triples a question's 200k-triple subgraph reaches the path search's (a
#: smaller store that does still compiles them on first use)
WARM_KERNELS_TRIPLES = 1_000_000
#: a subset store warms them when a recorded walk has this many edges: about the
#: subgraph of a 1M-triple store's hub question (a subset's replayed 200k-edge walks ran
#: 40 % slower on numpy than the full store's questions on the kernels)
WARM_WALK_EDGES = 100_000


def freeze_warm_state() -> int:
    """Collect what loading left behind, then freeze the rest; returns the number of
    objects frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def warm_kernels(kg: Any) -> bool:
    """Warm PoG's compiled kernels when `kg` is a local store of at least
    WARM_KERNELS_TRIPLES triples, or a subset (`kg subset`) whose recorded walks reach
    WARM_WALK_EDGES: its questions replay subgraphs cut from a large store, and no walk
    of its own would load the kernels (replaying runs none). True when they were warmed
    and are in use."""
    from kgreason.kg.store import StoreKG

    if not isinstance(kg, StoreKG):
        return False
    big = int(kg.manifest.counts.get("triples", 0)) >= WARM_KERNELS_TRIPLES
    if not big and kg.walks.largest() < WARM_WALK_EDGES:
        return False
    return warm_all()


def kernel_modules() -> tuple[str, ...]:
    """Every compiled-kernel module: the store's, PoG's array form's and the embedders'."""
    from kgreason.embed.kernels import MODULES as EMBED
    from kgreason.kg.store.kernels import MODULES as STORE
    from kgreason.pog.arrays.kernels import MODULES as POG

    return (*STORE, *POG, *EMBED)


def warm_all() -> bool:
    """Warm every kernel module (kgreason.jit.warm), whatever the KG."""
    from kgreason.jit import warm

    return warm(kernel_modules())


def kernel_cache() -> dict[str, bool | None]:
    """For each compiled kernel (every LOOPS entry of kernel_modules(), as
    "module.loop#i"), whether numba's disk cache holds it (kgreason.jit.disk_cached: True,
    False, or None when that cannot be told). Reads the cache's index files only: nothing
    is compiled or loaded, so this costs ~0.4 s (importing numba) even on a cold cache."""
    from kgreason.jit import disk_cached

    out: dict[str, bool | None] = {}
    for name in kernel_modules():
        for i, entry in enumerate(importlib.import_module(name).LOOPS):
            out[f"{name.rsplit('.', 1)[-1]}.{entry[0].__name__}#{i}"] = disk_cached(*entry)
    return out


def warm_built_store(triples: int, warm: bool | None = None) -> str:
    """`kgreason kg build`'s last step: compile PoG's kernels now (warm_all; the compile
    prints kgreason.jit's one-line notice) when a store of `triples` triples is large
    enough that its questions use them (WARM_KERNELS_TRIPLES, what `kgreason serve`
    warms for) and numba's disk cache does not hold them all yet. `warm` True: whatever
    the size; False: never. What happened: "compiled", "cached" (nothing to do), "small",
    "off" (warm False or KGREASON_JIT=0), "numpy" (numba missing or a compile failed:
    numpy forms are used, as on any failure of a kernel)."""
    from kgreason.jit import MISSING_NOTICE, jit_mode, numba_installed

    if warm is False or jit_mode() == "off":
        return "off"
    if warm is None and triples < WARM_KERNELS_TRIPLES:
        return "small"
    if not numba_installed():  # the light install: say once what the large store costs
        print(MISSING_NOTICE, file=sys.stderr, flush=True)
        return "numpy"
    if all(kernel_cache().values()):
        return "cached"
    return "compiled" if warm_all() else "numpy"
