"""The one seam between PoG's reference stages and a faster form of the question graph.

The stage modules (paths, reduction, render, fuzzy, order_free, ...) are the reference:
plain Python over `ClusteredGraph` and `ReasoningPath`s, written to read like the paper.
A faster form (the integer-array graph of a local store, `kgreason.pog.arrays`) keeps the
same data interface (it is a `ClusteredGraph`, its paths are `ReasoningPath`s whose hops
are `Hop`s) and may do some whole operations its own way. Those operations are the
methods of `Backend`, declared once here. A stage marks its reference implementation with
`@dispatch`; a call then runs the backend's method of the same name when the first
argument (a graph, or a collection of paths) names a backend in its `backend` attribute
and that backend has the method, and the reference otherwise. `backend` is a Backend
object, or the dotted name of a module whose `BACKEND` is one (imported on the first
dispatch, as networkx names its backends: so the form's data classes need not import the
module holding their operations). So:

- a stage never checks types and never imports the array package;
- a backend implements any subset of `Backend` (tests/extending/test_toy_graph_backend.py
  adds one without touching a stage);
- what a search means is changed in the reference, and a backend that must follow says so
  in its own tests (tests/pog compare both forms on the same graphs).

As in networkx's backends, the dispatch point is this one decorator; the only module that
chooses a form is `kgreason.pog.graph` (`prepare_graph`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import numpy as np

    from kgreason.pog.clustering import ClusteredGraph
    from kgreason.pog.evidence import Shown
    from kgreason.pog.path_budget import Budget
    from kgreason.pog.paths import Chain
    from kgreason.pog.types import ReasoningPath

F = TypeVar("F", bound=Callable[..., Any])


class PathTexts(Protocol):
    """The texts of a collection of paths (one per path, in order), and, where the form
    can, each path's vector summed from its pieces' vectors (a static embedder's vectors
    add up over pieces of text); None when it cannot."""

    def texts(self) -> list[str]: ...

    def texts_at(self, which: Sequence[int]) -> list[str]: ...

    def vectors(self, pieces: Any) -> np.ndarray | None: ...

    def cosines(self, pieces: Any, query: np.ndarray) -> np.ndarray | None: ...


class Backend(Protocol):
    """What a form of the question graph may do its own way; every method is optional.
    The first argument is the object whose `backend` attribute named this backend."""

    # -- the graph (reduction.py)
    def bfs_distances(
        self, graph: ClusteredGraph, source: str, max_depth: int
    ) -> Mapping[str, int]: ...

    def connecting_subgraph(
        self, graph: ClusteredGraph, topics: list[str], max_len: int
    ) -> ClusteredGraph | None: ...

    # -- entity paths (paths.py)
    def single_entity_paths(
        self, graph: ClusteredGraph, start: str, min_len: int, max_len: int, budget: Budget
    ) -> Sequence[ReasoningPath]: ...

    def segment_paths(
        self,
        graph: ClusteredGraph,
        s: str,
        t: str,
        max_len: int,
        budget: Budget,
        avoid: frozenset[str],
    ) -> list[Chain]: ...

    def ordered_paths(
        self, graph: ClusteredGraph, chains: list[Chain], entity_list: tuple[str, ...]
    ) -> list[ReasoningPath]: ...

    # -- every order of the topics (order_free.py)
    def merge_orders(
        self,
        graph: ClusteredGraph,
        found: list[Sequence[ReasoningPath]],
        reference: tuple[str, ...],
        max_paths: int,
    ) -> tuple[list[ReasoningPath], int]: ...

    def collision_paths(
        self, graph: ClusteredGraph, paths: Sequence[ReasoningPath]
    ) -> list[bool]: ...

    def ranked_sets(
        self, graph: ClusteredGraph, path: ReasoningPath, first: int | None
    ) -> list[Sequence[str]]: ...

    # -- what a result shows of its paths (evidence.py)
    def shown_paths(
        self,
        graph: ClusteredGraph,
        paths: Sequence[ReasoningPath],
        max_members: int | None,
        max_triples: int | None,
    ) -> Shown: ...

    # -- a collection of paths (render.py, fuzzy.py)
    def render_texts(
        self,
        paths: Sequence[ReasoningPath],
        names: Mapping[str, str],
        max_items: int | None,
        max_tokens: int | None,
        with_ids: bool,
    ) -> list[str]: ...

    def shown_ids(self, paths: Sequence[ReasoningPath], cap: int | None) -> set[str]: ...

    def shown_names(
        self, graph: ClusteredGraph, paths: Sequence[ReasoningPath], cap: int | None
    ) -> dict[str, str] | None: ...

    def path_texts(
        self, paths: Sequence[ReasoningPath], names: Mapping[str, str], max_items: int
    ) -> PathTexts: ...


#: the operations a backend may provide (Backend's methods)
OPERATIONS = frozenset(n for n in vars(Backend) if not n.startswith("_"))


def backend_of(obj: object) -> Backend | None:
    """The backend `obj` names (its `backend` attribute), or None: the reference."""
    named = getattr(obj, "backend", None)
    return _module_backend(named) if isinstance(named, str) else named


@functools.cache
def _module_backend(module: str) -> Backend:
    backend: Backend = importlib.import_module(module).BACKEND
    return backend


def dispatch(reference: F) -> F:
    """Mark `reference` as the reference implementation of a Backend operation (of its
    name): a call runs the first argument's backend's method when there is one."""
    name = reference.__name__
    if name not in OPERATIONS:
        raise TypeError(f"{name} is not an operation of pog.backend.Backend")

    @functools.wraps(reference)
    def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
        impl = getattr(backend_of(obj), name, None)
        if impl is None:
            return reference(obj, *args, **kwargs)
        return impl(obj, *args, **kwargs)

    call.reference = reference  # type: ignore[attr-defined]
    return call  # type: ignore[return-value]
