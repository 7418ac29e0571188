"""FuzzySelect (section 4.3, Algorithm 2): rank paths by the cosine similarity between the
indicator (I_LLM / I_Sup; the question itself in LLM-free mode) and each path's text, keep
the top W.

Path texts for embedding are rendered WITHOUT ids (ids are noise to a sentence embedder)
and with sets shortened to their first EMBED_MAX_ITEMS members plus "(+N more)". Embeddings are
cached by text (the embed package's one LRU, `CachedEmbedder`): the same path text recurs
across depths and phases of a question, and across questions on a shared hub.
Ties keep the input order (cosine_topk breaks ties by index).

Many paths and a transformer embedder (MiniLM, sentence-transformers): a 10M-triple KG's hub
question reaches fuzzy ranking with 20,000 paths, which MiniLM on a CPU embeds in ~5 min
(~15 ms a path text). With a `prefilter` (`static_prefilter`: the vendored static
distillation of MiniLM, ~0.06 ms a text) and `prefilter_top` N, more than max(N, top) paths
are first ranked by the static model, and only its best max(N, top) are embedded and ranked
by the transformer (kept in input order, so ties still keep it). The paper embeds every
path (section 4.3); fewer than max(N, top) paths are ranked exactly that way.

API:
    FuzzySelector(embedder, *, prefilter=None, prefilter_top=0)  (embedder wrapped in a
        CachedEmbedder unless it is one)
        .prefiltered(n_paths, top) -> how many the transformer embeds, or None (all)
        .rank(indicator, paths, names, *, max_items=...) -> list[ScoredPath]  (all, best first)
        .select(indicator, paths, names, w, *, max_items=...) -> list[ReasoningPath]
    path_texts(paths, names, max_items) -> PathTexts (a backend operation, pog/backend.py)
    path_vectors(embedder, texts, pieces_of) -> the paths' vectors (summed from the texts'
        pieces where the form can and the embedder is a static model)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kgreason.embed.base import Embedder
from kgreason.embed.cache import CachedEmbedder
from kgreason.pog.backend import PathTexts, dispatch
from kgreason.pog.render import render_paths
from kgreason.pog.types import ReasoningPath

#: set members shown in an embedded path text: relation names carry most of the similarity,
#: and short texts keep SentenceBERT fast (its cost grows with text length)
EMBED_MAX_ITEMS = 4


@dataclass(frozen=True)
class ScoredPath:
    path: ReasoningPath
    score: float
    text: str


@dataclass(frozen=True)
class RenderedTexts:
    """PathTexts of paths rendered one by one: no pieces to sum."""

    rendered: list[str]

    def texts(self) -> list[str]:
        return self.rendered

    def texts_at(self, which: Sequence[int]) -> list[str]:
        return [self.rendered[i] for i in which]

    def vectors(self, pieces: object) -> np.ndarray | None:
        return None

    def cosines(self, pieces: object, query: np.ndarray) -> np.ndarray | None:
        return None


@dispatch
def path_texts(
    paths: Sequence[ReasoningPath], names: Mapping[str, str], max_items: int
) -> PathTexts:
    """The texts fuzzy ranking embeds: each path rendered without ids."""
    return RenderedTexts(render_paths(paths, names, max_items=max_items, with_ids=False))


class FuzzySelector:
    """`embedder` is used as is when it already caches (a CachedEmbedder, which
    `build_embedder` returns); otherwise it is wrapped in one."""

    #: a trained ranker (pog/ranker) masks `[mentions]` itself and already scores length
    learned: bool = False
    #: the LLM-free mode answers with the top path's end set (not only candidates)
    answers: bool = False
    #: a zero-shot ranking answers (pog/ranker/zeroshot.py): labelled so
    zero_shot: bool = False
    #: what ranks the paths a prefilter keeps (the bound's report, prefilter_note)
    prefilter_by: str = "the embedder"
    #: paths the transformer embeds when there are more (0: all); see the module docstring
    prefilter_top: int = 0
    _prefilter_load: Callable[[], Embedder] | None = None
    _prefilter: Embedder | None = None

    def __init__(
        self,
        embedder: Embedder,
        *,
        prefilter: Callable[[], Embedder] | None = None,
        prefilter_top: int = 0,
    ):
        self.cache = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(embedder)
        self._prefilter_load, self.prefilter_top = prefilter, prefilter_top

    def prefiltered(self, n_paths: int, top: int | None) -> int | None:
        """How many of `n_paths` paths the embedder ranks when asked for the `top` best
        (the static model's best), or None when it ranks them all."""
        if self._prefilter_load is None:
            return None
        return self._cut(n_paths, top)

    def _cut(self, n_paths: int, top: int | None) -> int | None:
        """max(prefilter_top, top) when there are more paths than that, else None."""
        if not self.prefilter_top or top is None:
            return None
        keep = max(self.prefilter_top, top)
        return keep if n_paths > keep else None

    def rank(
        self,
        indicator: str,
        paths: Sequence[ReasoningPath],
        names: Mapping[str, str],
        *,
        max_items: int = EMBED_MAX_ITEMS,
        top: int | None = None,
    ) -> list[ScoredPath]:
        """Every path scored (best first), or the `top` best."""
        return self.scored(indicator, paths, names, max_items, top) if paths else []

    def scored(
        self,
        indicator: str,
        paths: Sequence[ReasoningPath],
        names: Mapping[str, str],
        max_items: int,
        top: int | None,
    ) -> list[ScoredPath]:
        """`rank` of a non-empty list: the cosine of each path's text to the indicator.
        Texts are made only for the paths returned (and for an embedder that needs them)."""
        tree: PathTexts = path_texts(paths, names, max_items)
        keep = self.prefiltered(len(paths), top)
        if keep is not None:  # the static model's best `keep`, in input order
            if self._prefilter is None:
                assert self._prefilter_load is not None
                self._prefilter = self._prefilter_load()
            pre = self._prefilter
            best, _ = top_scores(path_cosines(pre, pre.embed([indicator])[0], tree), keep)
            chosen = sorted(best.tolist())
            paths = [paths[i] for i in chosen]
            tree = RenderedTexts(tree.texts_at(chosen))
        q = self.cache.embed([indicator])[0]
        idx, scores = top_scores(
            path_cosines(self.cache, q, tree), len(paths) if top is None else top
        )
        texts = tree.texts_at(idx.tolist())
        return [
            ScoredPath(paths[i], float(s), text)
            for i, s, text in zip(idx.tolist(), scores, texts, strict=True)
        ]

    def select(
        self,
        indicator: str,
        paths: Sequence[ReasoningPath],
        names: Mapping[str, str],
        w: int,
        *,
        max_items: int = EMBED_MAX_ITEMS,
    ) -> list[ReasoningPath]:
        if len(paths) <= w:
            # still ranked, so callers get the best first
            return [s.path for s in self.rank(indicator, paths, names, max_items=max_items)]
        return [s.path for s in self.rank(indicator, paths, names, max_items=max_items, top=w)]


def _pieces(embedder: Embedder):  # type: ignore[no-untyped-def]
    """The static model under `embedder` when its vectors add up over pieces, else None."""
    pieces = getattr(getattr(embedder, "inner", embedder), "pieces", None)
    return pieces() if pieces is not None else None


def path_vectors(embedder: Embedder, texts: list[str], tree: PathTexts | None) -> np.ndarray:
    """embedder.embed(texts), or, where the texts' form can sum them (`tree.vectors`: the
    array form's table of a free search) and the embedder is a static model whose vectors
    add up over pieces of text, the same vectors summed from the paths' pieces (a 10M hub
    question's 20,000 texts ~0.3 s -> ~0.02 s; equal within float rounding). Those bypass
    the text cache: summing costs less than its lookups, and 20,000 one-question texts
    would evict what recurs."""
    got = _pieces(embedder) if tree is not None else None
    summed = tree.vectors(got) if tree is not None and got is not None else None
    return summed if summed is not None else embedder.embed(texts)


def path_cosines(embedder: Embedder, query: np.ndarray, tree: PathTexts) -> np.ndarray:
    """Each path's cosine to the unit `query`: from the pieces where path_vectors would sum
    them (`tree.cosines`, no vectors made), else from the embedded texts."""
    got = _pieces(embedder)
    cos = tree.cosines(got, query) if got is not None else None
    if cos is None:
        cos = embedder.embed(tree.texts()) @ np.asarray(query, np.float32).reshape(-1)
    return np.asarray(cos, dtype=np.float32)


def top_scores(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (index, score), best first, ties by index (as cosine_topk orders them)."""
    if scores.shape[0] == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    order = np.lexsort((np.arange(scores.shape[0]), -scores))[: min(k, scores.shape[0])]
    return order.astype(np.int64), scores[order].astype(np.float32)


def static_prefilter(embedder: Embedder) -> Callable[[], Embedder] | None:
    """A loader of the vendored static model (loaded on first use), for a transformer
    embedder (one whose class sets `transformer = True`: MiniLM, sentence-transformers);
    None for any other (the static model itself, a test double), which ranks every path."""
    if not is_transformer(embedder):
        return None

    def load() -> Embedder:
        from kgreason.embed.static import StaticEmbedder

        return CachedEmbedder(StaticEmbedder())

    return load


def is_transformer(embedder: Embedder) -> bool:
    """A costly embedder per text (its class sets `transformer = True`), cache or not."""
    return bool(getattr(getattr(embedder, "inner", embedder), "transformer", False))


def prefilter_note(n_paths: int, kept: int, by: str = "the embedder") -> str:
    """The bound a prefiltered ranking reports (PoGResult.bounds_hit, the pruning funnel)."""
    return (
        f"fuzzy ranking: {n_paths:,} paths ranked by the static model first, its best {kept}"
        f" by {by} (pog.fuzzy_prefilter)"
    )
