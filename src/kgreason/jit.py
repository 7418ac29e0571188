"""Compiled loops for the graph stages at scale: the plumbing every kernel module shares.

Why: after vectorising the graph stages with numpy, what was left at 10M triples were steps
numpy can only do by sorting or by many passes over the same rows (merging sorted runs,
dropping repeats). A plain loop does them in one pass; numba compiles it (llvmlite: no
compiler needed on the user's machine). The loops live beside the code that calls them:
the store's in `kgreason.kg.store.kernels`, PoG's array form's in
`kgreason.pog.arrays.kernels`; this module is below both, so neither imports the other.

Rules every kernel module follows:
- the numpy form is the reference: tests run both on the same inputs and compare;
- the compiled form is used only for inputs of at least `min_rows` rows (per kernel), and
  numba is loaded only by an input of LOAD_ROWS rows or by `warm()` (what long-running
  entry points call for large KGs), so small KGs (the embedded default, MetaQA) and
  one-shot questions that would not get the load back never import it;
- a loop is compiled for one explicit signature, on first use or by `warm()`; numba caches
  the machine code on disk (beside its module, else in the user's cache directory), so
  a later process loads all of them in ~0.3-0.8 s instead of compiling (15-20 s for all);
- a process that compiles a loop numba's disk cache does not hold says so, once, on
  stderr (COMPILE_NOTICE), however many loops it compiles; loading from the cache is
  quiet. `disk_cached()` tells from the cache's index files, without compiling, whether a
  loop would load (what `kgreason doctor` reports);
- KGREASON_JIT=0 turns every kernel off (numpy everywhere), KGREASON_JIT=1 on at any size;
- the path search's largest expansions run in parts on up to `threads()` threads
  (KGREASON_JIT_THREADS; the loops release the GIL), with the same output as one call;
- if numba is missing or cannot compile a loop, numpy is used and the reason logged once;
- a kernel module has LOOPS = [(loop, signature[, helpers])] and `warm_inputs()`, a smoke
  call on a tiny input; a loop's helpers live in its own module (numba's disk cache of a
  loop is invalidated by its own file only).
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import sys
import threading
import types
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from kgreason.cpus import usable_cpus

log = logging.getLogger(__name__)
T = TypeVar("T")


def jit_mode() -> str:
    """'off', 'on' (every size) or 'auto' (large inputs), from KGREASON_JIT."""
    v = os.environ.get("KGREASON_JIT", "").strip().lower()
    if v in ("0", "off", "false", "no"):
        return "off"
    if v in ("1", "on", "true", "yes", "always"):
        return "on"
    return "auto"


#: in "auto" mode, an input of this many rows loads numba when it is not loaded yet;
#: smaller inputs from their kernel's threshold use it only once it is (warm() or an
#: earlier large input). Loading costs 0.3-0.8 s (4-11 s uncached), which a one-question
#: process (`kgreason ask`) only gets back on inputs this large; MetaQA's hub questions
#: (~110k rows) stay on numpy.
LOAD_ROWS = 1_000_000


def threads() -> int:
    """Threads a large compiled step may split over (KGREASON_JIT_THREADS, else the CPUs
    this process may run on, at most 4): the loops release the GIL, so parts of one
    level's expansion run at once. 1 keeps every step on the calling thread."""
    v = os.environ.get("KGREASON_JIT_THREADS", "").strip()
    if v:
        try:
            return max(int(v), 1)
        except ValueError:
            log.warning("KGREASON_JIT_THREADS=%r is not a number: using 1", v)
            return 1
    return min(usable_cpus(), 4)


def run_parallel(calls: Sequence[Callable[[], T]], n_threads: int | None = None) -> list[T]:
    """Each call's result, in order; on up to `n_threads` (default threads()) threads when
    there are several, the calling thread taking the first. For independent compiled
    calls (which release the GIL), e.g. the two topics' BFS of a two-topic reduction."""
    n = threads() if n_threads is None else n_threads
    if n < 2 or len(calls) < 2:
        return [c() for c in calls]
    with ThreadPoolExecutor(min(n, len(calls)) - 1, "kgreason-kernels") as ex:
        rest = [ex.submit(c) for c in calls[1:]]
        first = calls[0]()
        return [first, *(f.result() for f in rest)]


#: what `warm()` prints (stderr) when numba is not installed: the light install leaves it
#: out (llvmlite alone is ~170 MB), and a large KG then runs every graph stage in numpy
MISSING_NOTICE = (
    "kgreason: numba is not installed: the graph stages of large KGs run in numpy (same "
    "answers, slower); pip install 'kgreason[jit]' compiles them"
)


def numba_installed() -> bool:
    """Whether numba can be imported, without importing it (~0.3 s)."""
    import importlib.util

    try:
        return numba_loaded() or importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False


def numba_loaded() -> bool:
    """Whether numba is imported in this process already (warm(), or an earlier call)."""
    return sys.modules.get("numba") is not None


def use_jit(rows: int, min_rows: int, jit: bool | None = None) -> bool:
    """Whether a kernel call on `rows` rows takes the compiled form (`jit` forces it)."""
    if jit is not None:
        return jit
    mode = jit_mode()
    if mode != "auto":
        return mode == "on"
    return rows >= min_rows and (rows >= LOAD_ROWS or numba_loaded())


#: a compiled loop's helper: (its name in the loop's module, the plain function, signature)
Helper = tuple[str, Callable[..., Any], str]


@functools.cache
def compiled(
    loop: Callable[..., Any], signature: str, helpers: tuple[Helper, ...] = ()
) -> Callable[..., Any] | None:
    """`loop` compiled by numba for `signature` (once per process), or None when numba is
    not installed or cannot compile it (logged once; callers then use numpy). `helpers`:
    plain functions the loop calls (one loop's code shared by another): each is compiled
    for its signature first and the loop sees it under its name, so a kernel module needs
    no numba decorator at import (small KGs never import numba). A helper lives in its
    loop's module: numba's disk cache of a loop is invalidated by its own file only."""
    try:
        import numba
    except ImportError as e:  # an install without numba: numpy everywhere
        log.info("numba not importable (%s): PoG's graph stages use numpy only", e)
        return None
    if disk_cached(loop, signature, helpers) is False:  # a compile, not a load: say so once
        announce_compile()
    try:  # an explicit signature compiles now (or loads numba's disk cache), not mid-question
        if helpers:
            loop = _with_helpers(loop, helpers)
        fn = _njit(numba, loop, signature)
    except Exception as e:  # any compiler failure means: use numpy
        log.warning("numba could not compile %s (%s): using numpy", loop.__name__, e)
        return None
    return _Guarded(fn, loop.__name__)


def _with_helpers(fn: Callable[..., Any], helpers: tuple[Helper, ...]) -> Callable[..., Any]:
    """fn seeing the compiled helpers under their names (each helper sees those before it,
    so a helper may call an earlier one)."""
    scope = dict(fn.__globals__)
    for i, (name, h, sig) in enumerate(helpers):
        scope[name] = _helper(h, sig, helpers[:i])
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__)


@functools.cache
def _helper(fn: Callable[..., Any], signature: str, before: tuple[Helper, ...] = ()) -> Any:
    """A helper compiled once per process, however many loops call it."""
    import numba

    return _njit(numba, _with_helpers(fn, before) if before else fn, signature)


def _njit(numba: Any, fn: Callable[..., Any], signature: str) -> Any:
    """numba.njit with the disk cache, or without it where no cache location is writable
    (compiled in this process only)."""
    try:
        return numba.njit(signature, cache=True, nogil=True)(fn)
    except RuntimeError:
        return numba.njit(signature, cache=False, nogil=True)(fn)


#: the one line a process prints (stderr) before it first compiles a loop that numba's disk
#: cache does not hold: all of them compile in 15-20 s, once per install (and again after
#: a kernel module or numba changes)
COMPILE_NOTICE = (
    "kgreason: compiling graph kernels once (~20 s); later runs load them from numba's cache"
)
_notice_lock = threading.Lock()
_noticed = False


def announce_compile() -> None:
    """Print COMPILE_NOTICE on stderr, the first time only in this process (however many
    loops compile, on however many threads)."""
    global _noticed
    with _notice_lock:
        if _noticed:
            return
        _noticed = True
    log.debug("compiling kernels that numba's disk cache does not hold")
    print(COMPILE_NOTICE, file=sys.stderr, flush=True)


def disk_cached(
    loop: Callable[..., Any], signature: str, helpers: tuple[Helper, ...] = ()
) -> bool | None:
    """Whether numba's disk cache holds `loop`'s machine code for `signature` (and each
    helper's), valid for this numba, CPU and the loop's source file, so that compiled()
    would load it instead of compiling. Read from the cache's index files: nothing is
    compiled, and no code is loaded (numba is imported, ~0.3 s). False also when there is
    no writable cache location (every process compiles); None when it cannot be told
    (numba missing, or its cache internals changed)."""
    try:
        from numba.core.caching import FunctionCache
        from numba.core.registry import cpu_target
    except ImportError:
        return None
    try:
        codegen = cpu_target.target_context.codegen()
        # a helper's compiled form is its own code (in its scope), so its own index entry
        for fn, sig in ((loop, signature), *((h, s) for _, h, s in helpers)):
            try:
                cache = FunctionCache(fn)
            except RuntimeError:  # no cache location numba can write: nothing is cached
                return False
            # the key numba's Cache.load_overload looks up; an index made by another numba
            # version or for an older source file reads as empty
            name = cache._cache_file._load_index().get(cache._index_key(sig, codegen))
            if name is None or not os.path.isfile(os.path.join(cache.cache_path, name)):
                return False
    except Exception as e:  # numba's private cache API moved: unknown, not an error
        log.debug("cannot read numba's cache index for %s: %s", loop.__name__, e)
        return None
    return True


class _Guarded:
    """A compiled loop that also takes read-only arrays (a memory map, a frozen table):
    numba's explicit signatures reject them, so on a signature mismatch the call is retried
    once with writable copies of the read-only arguments (logged once). Other mismatches
    raise, as before."""

    def __init__(self, fn: Callable[..., Any], name: str):
        self.fn, self.name, self.warned = fn, name, False

    def __call__(self, *args: Any) -> Any:
        try:
            return self.fn(*args)
        except TypeError:
            fixed = tuple(
                np.array(a) if isinstance(a, np.ndarray) and not a.flags.writeable else a
                for a in args
            )
            if all(f is a for f, a in zip(fixed, args, strict=True)):
                raise
            if not self.warned:
                self.warned = True
                log.info("%s: read-only arrays copied for the compiled loop", self.name)
            return self.fn(*fixed)


def warm(modules: Sequence[str]) -> bool:
    """Compile (or load from numba's disk cache) every loop of these kernel modules (dotted
    names) now and run each module once on a tiny input, so the first large question does
    not pay it. For long-running entry points (`kgreason serve`, `kgreason mcp`, benches:
    `kgreason.heap.warm_all`). True when every compiled form is in use; False with
    KGREASON_JIT=0 or without numba."""
    if jit_mode() == "off":
        return False
    if not numba_installed():  # a warm-up is asked for a large KG: say what it costs
        print(MISSING_NOTICE, file=sys.stderr, flush=True)
        return False
    ok = True
    for name in modules:
        mod = importlib.import_module(name)
        ok &= all(compiled(*entry) is not None for entry in mod.LOOPS)
        ok &= bool(mod.warm_inputs())
    return ok
