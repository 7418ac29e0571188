"""numpy's BLAS held to one thread while MiniLM's batches run on threads of their own.

Why: MiniLM encodes batches on threads (embed/minilm.py); a BLAS that also threads each
matmul puts 2 x cores threads on the cores (measured 1.6x slower than one BLAS thread per
batch on a 2-core VM). BLAS's thread count is process-wide: OpenBLAS's pthreads build (numpy's
wheels) has no per-thread setting (its `openblas_set_num_threads_local` sets the global one).
So one coordinator per process, `BLAS`, counts the callers that need one thread: the first
to come saves the counts and sets 1, the last to leave restores them. While it holds, other
threads' matmuls run on one thread too: slower for the while, never different. threadpoolctl
finds the BLAS libraries loaded; their setters are called through ctypes, because
threadpoolctl >= 3.8 ignores limits from all threads but one, and callers restoring each
other's "original" counts could leave BLAS on one thread for good.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

log = logging.getLogger(__name__)

_AFFIXES = list(itertools.product(("", "scipy_"), ("", "64_", "_64")))
#: (getter, setter) symbol names by threadpoolctl's internal_api
_SYMBOLS: dict[str, list[tuple[str, str]]] = {
    "openblas": [
        (f"{p}openblas_get_num_threads{s}", f"{p}openblas_set_num_threads{s}") for p, s in _AFFIXES
    ],
    "mkl": [("MKL_Get_Max_Threads", "MKL_Set_Num_Threads")],
    "blis": [("bli_thread_get_num_threads", "bli_thread_set_num_threads")],
}


@dataclass(frozen=True)
class _Lib:
    path: str
    get: Callable[[], int]
    set: Callable[[int], None]


def threaded_blas_libs() -> list[_Lib] | None:
    """The threaded BLAS libraries loaded in this process, with their thread-count getter
    and setter; [] when none is threaded; None when one is of a kind without known setters
    (or threadpoolctl is missing), so it cannot be held to one thread."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # a dependency; without it nothing can be said
        log.warning("threadpoolctl is not installed: MiniLM batches run one at a time")
        return None
    libs = []
    for info in threadpool_info():
        if info.get("user_api") != "blas" or info.get("num_threads", 1) <= 1:
            continue
        lib = _open(info.get("filepath", ""), _SYMBOLS.get(info.get("internal_api", ""), []))
        if lib is None:
            log.info("no thread setter for BLAS %s: MiniLM batches run one at a time", info)
            return None
        libs.append(lib)
    return libs


def _open(path: str, names: list[tuple[str, str]]) -> _Lib | None:
    try:
        dll = ctypes.CDLL(path)
    except OSError:
        return None
    for get_name, set_name in names:
        get, set_ = getattr(dll, get_name, None), getattr(dll, set_name, None)
        if get is not None and set_ is not None:
            get.restype, get.argtypes = ctypes.c_int, []
            set_.restype, set_.argtypes = None, [ctypes.c_int]
            return _Lib(path, get, set_)
    return None


class BlasThreads:
    """`one_thread()`: BLAS on one thread until the last caller inside it leaves. `usable()`
    says whether that can be had (the libraries are found on first use)."""

    def __init__(self, find: Callable[[], list[_Lib] | None] = threaded_blas_libs) -> None:
        self._find = find
        self._lock = threading.Lock()
        self._libs: list[_Lib] | None = None
        self._found = False
        self._users = 0
        self._saved: list[int] = []

    def usable(self) -> bool:
        with self._lock:
            if not self._found:
                self._libs, self._found = self._find(), True
            return self._libs is not None

    @contextlib.contextmanager
    def one_thread(self) -> Iterator[None]:
        if not self.usable():
            raise RuntimeError("BLAS cannot be held to one thread here (see usable())")
        with self._lock:
            if self._users == 0:
                libs = self._libs or []
                self._saved = [lib.get() for lib in libs]
                for lib in libs:
                    lib.set(1)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    for lib, n in zip(self._libs or [], self._saved, strict=True):
                        lib.set(n)


#: the process's one coordinator: BLAS's thread count is process-wide state, so the count of
#: callers that hold it to one thread is too (the package's one module-level mutable object)
BLAS = BlasThreads()
