"""Paths of a free search's table (pog/arrays/table.py) rendered from its arrays.

Why: fuzzy ranking renders every path a search found (up to 20,000 on a 10M-triple hub
question) and keeps a few dozen; rendering through path objects made one per path and
rendered each hop of each path. Here each distinct set (by its range of a level's node
pool) and each distinct hop arrow is rendered once, and a path's text is its prefix's
text plus its last step's: render.render_paths of a 20,000-path question went from
114-168 to 36-40 ms, and displayed_ids from 37-52 to 10-19 ms (the same texts and ids as
the objects': tests/pog/test_pathtable.py).

API (what render.render_paths, render.displayed_ids and fuzzy ranking call for TablePaths):
    texts(table, names, max_items, max_tokens, with_ids) -> list[str]   (output order)
    text_tree(table, names, max_items, max_tokens, with_ids) -> TextTree
        .texts() -> the same list;  .texts_at(indices) -> some of them
        .vectors(static model) -> the texts' vectors, each summed from its pieces'
        (measured: a hub question's 20,000 texts pooled 1.1 s -> 0.2-0.3 s)
        .cosines(static model, unit query) -> vectors(...) @ query, without the vectors
    shown_ids(table, cap) -> set[str]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from kgreason.kg.store.build_index import ranges
from kgreason.pog.arrays.kernels.rows import step_rows

if TYPE_CHECKING:
    from kgreason.pog.arrays.graph import ArrayClusteredGraph
    from kgreason.pog.arrays.table import FreeTable, Groups
    from kgreason.pog.types import ReasoningPath


def _on_paths(t: FreeTable) -> list[np.ndarray]:
    """Per length, the steps on some path: the paths' last steps and their prefixes (a
    length also holds partial paths that no path extends, and with min_len > 1 the
    shorter lengths are prefixes only)."""
    on = [np.zeros(st.n, dtype=bool) for st in t.lengths]
    for k, order in t.paths_out():
        on[k - 1][: len(order)] = True
    for k in range(len(t.lengths), 1, -1):
        on[k - 2][t.lengths[k - 1].arrays()[0][on[k - 1]]] = True
    return on


def _distinct_sets(t: FreeTable, k: int, on: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """(set index of each step on a path, -1 elsewhere; per chunk, the distinct sets'
    (a, b) as two rows) of length k."""
    st = t.lengths[k - 1]
    _, _, chunk, a, b = st.arrays()
    idx = np.full(len(a), -1, dtype=np.int64)
    spans: list[np.ndarray] = []
    n = 0
    for c in range(len(st.pools)):
        sel = np.flatnonzero((chunk == c) & on)
        if not len(sel):
            spans.append(np.zeros((2, 0), dtype=np.int64))
            continue
        span = a[sel] * (int(b[sel].max()) + 1) + b[sel]
        _, first, inv = np.unique(span, return_index=True, return_inverse=True)
        idx[sel] = n + inv.reshape(-1)
        spans.append(np.stack([a[sel][first], b[sel][first]]))
        n += len(first)
    return idx, spans


def _heads(t: FreeTable, cap: int | None) -> tuple[list[np.ndarray], list[list[tuple[Any, int]]]]:
    """Per length (0: the start set), the set index of each step (-1: on no path), and
    per distinct set its first `cap` member keys and size; every head gathered and
    decoded at once."""
    idx, flat, sizes = _head_ids(t, cap)
    keys = t.g.names[np.concatenate(flat)].tolist() if flat else []
    out: list[list[tuple[Any, int]]] = []
    at = 0
    for size in sizes:
        row = []
        for ln, total in size:
            for m, size_m in zip(ln.tolist(), total.tolist(), strict=True):
                row.append((keys[at : at + m], size_m))
                at += m
        out.append(row)
    return idx, out


def _head_ids(t: FreeTable, cap: int | None):
    """(_heads' set indices; the first `cap` member ids of every distinct set, as arrays
    in set order; per length and chunk, (members shown, size) of each set)."""
    on = _on_paths(t)
    per = [_distinct_sets(t, k, on[k - 1]) for k in range(1, len(t.lengths) + 1)]
    pools = [[np.array([t.start], dtype=np.int64)]] + [st.pools for st in t.lengths]
    spans = [[np.array([[0], [1 if len(t) else 0]], dtype=np.int64)]] + [s for _, s in per]
    heads, sizes = [], []
    for ps, ss in zip(pools, spans, strict=True):
        got, size = [], []
        for pool, (a, b) in zip(ps, ss, strict=True):
            ln = b - a if cap is None else np.minimum(b - a, cap)
            got.append(pool[ranges(a, ln)])
            size.append((ln, b - a))
        heads.append(got)
        sizes.append(size)
    flat = [h for hs in heads for h in hs]
    return [np.zeros(1, dtype=np.int64), *(i for i, _ in per)], flat, sizes


def shown_ids(t: FreeTable, cap: int | None) -> set[str]:
    """The keys a rendering capped at `cap` members per set shows (displayed_ids)."""
    _, heads = _heads(t, cap)
    return {x for row in heads for keys, _ in row for x in keys}


def shown_names(t: FreeTable, cap: int | None) -> dict[str, str] | None:
    """shown_ids with their display names, read by node id (None: the graph's nodes are
    not a store's; look the keys up)."""
    display = t.g.names.display
    if display is None:
        return None
    _, flat, _ = _head_ids(t, cap)
    if not flat:
        return {}
    ids = np.unique(np.concatenate(flat))
    return dict(zip(t.g.names[ids].tolist(), display(ids), strict=True))


def shown_set_names(
    g: ArrayClusteredGraph, paths: Sequence[ReasoningPath], cap: int | None
) -> dict[str, str] | None:
    """render.shown_names of paths whose shown sets are NameSets of `g` (a two-topic
    search's paths): the first `cap` ids of each set, their names read by node id. None
    when the graph's nodes are not a store's or some set is not one of g's NameSets."""
    from kgreason.pog.arrays.hops import NameSet
    from kgreason.pog.render import shown_sides  # (render imports this module)

    display = g.names.display
    if display is None:
        return None
    parts = []
    for hop, dst in shown_sides(paths):
        side = hop.side(dst)
        if not isinstance(side, NameSet) or side._names is not g.names:
            return None
        parts.append(side.ids if cap is None else side.ids[:cap])
    if not parts:
        return {}
    ids = np.unique(np.concatenate(parts))
    return dict(zip(g.names[ids].tolist(), display(ids), strict=True))


def _arrows(
    t: FreeTable, groups: Groups, steps: np.ndarray, memo: dict[tuple[int, ...], str]
) -> tuple[list[str], np.ndarray]:
    """render.step_arrow of each of `steps`' hops, as (the distinct arrows, each step's
    index into them): each distinct key group rendered once, no string per step."""
    from kgreason.pog.render import step_arrow  # (render imports this module)

    codes, inv = np.unique(groups.key[steps], return_inverse=True)
    labels: list[str] = []
    for c in codes.tolist():
        got = memo.get((c,))
        if got is None:
            got = memo[(c,)] = step_arrow(t.maker.keys((c,)))
        labels.append(got)
    of = inv.reshape(-1).astype(np.int64)
    if groups.alts:
        where = {x: i for i, x in enumerate(labels)}
        at = np.searchsorted(steps, np.fromiter(groups.alts, dtype=np.int64))
        for i, j in zip(groups.alts, at.tolist(), strict=True):
            if j < len(steps) and steps[j] == i:
                codes_i = groups[i]
                got = memo.get(codes_i)
                if got is None:
                    got = memo[codes_i] = step_arrow(t.maker.keys(codes_i))
                if got not in where:
                    where[got] = len(labels)
                    labels.append(got)
                of[j] = where[got]
    return labels, of


def _plain_sets(row: list[tuple[Any, int]], names: Mapping[str, str], cap: int | None) -> list[str]:
    """render._render_set of each (head, size) without ids or a token budget (what fuzzy
    ranking renders, thousands of sets a question), without a call per member."""
    get = names.get
    out = []
    for keys, n in row:
        shown = [get(i) or i for i in keys[:cap]]
        more = f", ... (+{n - len(shown)} more)" if n > len(shown) else ""
        out.append("{" + ", ".join(shown) + more + "}")
    return out


@dataclass
class TextTree:
    """A table's path texts as pieces: each length's steps are their parent's text (the
    previous length's step `parent`, or the start set) + an arrow + a set, every distinct
    arrow and set rendered once (`arrows`, `sets` per length; `arrow`, `set`: each step's
    index into them, for the steps on some path). Arrows begin and end with a space, so a
    text's space-separated words are its pieces' words (what `vectors` relies on)."""

    table: FreeTable
    start: str
    arrows: list[list[str]]
    sets: list[list[str]]
    steps: list[np.ndarray]  # per length: the steps on some path
    parent: list[np.ndarray]  # per length: their parents (length 1: 0, the start set)
    arrow: list[np.ndarray]
    set: list[np.ndarray]

    def texts(self) -> list[str]:
        """render.render_paths of every path, in output order."""
        text: list[list[str]] = [[self.start]]
        for k in range(1, len(self.steps) + 1):
            prev, arrows, sets = text[k - 1], self.arrows[k - 1], self.sets[k - 1]
            tk = [""] * self.table.lengths[k - 1].n
            for i, p, a, x in zip(
                self.steps[k - 1].tolist(),
                self.parent[k - 1].tolist(),
                self.arrow[k - 1].tolist(),
                self.set[k - 1].tolist(),
                strict=True,
            ):
                tk[i] = prev[p] + arrows[a] + sets[x]
            text.append(tk)
        out: list[str] = []
        for k, order in self.table.paths_out():
            out += [text[k][i] for i in order.tolist()]
        return out

    def texts_at(self, which: Sequence[int]) -> list[str]:
        """texts()[i] for each i of `which`, each built from its own chain of pieces (fuzzy
        ranking keeps a few dozen of 20,000 texts)."""
        out_of = self.table.paths_out()
        ends = np.cumsum([len(order) for _, order in out_of])
        at = [np.full(self.table.lengths[k].n, -1, dtype=np.int64) for k in range(len(self.steps))]
        for k, on in enumerate(self.steps):
            at[k][on] = np.arange(len(on))
        got = []
        for j in which:
            g = int(np.searchsorted(ends, j, side="right"))
            k, order = out_of[g]
            step = int(order[j - (int(ends[g - 1]) if g else 0)])
            parts: list[str] = []
            for level in range(k, 0, -1):
                pos = int(at[level - 1][step])
                parts.append(self.sets[level - 1][int(self.set[level - 1][pos])])
                parts.append(self.arrows[level - 1][int(self.arrow[level - 1][pos])])
                step = int(self.parent[level - 1][pos])
            got.append(self.start + "".join(reversed(parts)))
        return got

    def _levels(self, pieces: PieceEmbedder, take):  # type: ignore[no-untyped-def]
        """take(k, (vectors, tokens, chars) of length k's steps on a path, rows of its
        output paths) for each output length, in output order: the sums of each path's
        pieces, a level at a time."""
        vec, tokens, chars = pieces.piece_sums(
            [
                self.start,
                *(x for row in self.arrows for x in row),
                *(x for r in self.sets for x in r),
            ]
        )
        a_at = 1 + np.cumsum([0, *map(len, self.arrows)])
        s_at = a_at[-1] + np.cumsum([0, *map(len, self.sets)])
        level = (vec[:1], tokens[:1], chars[:1])  # rows: the previous length's steps on a path
        at = np.zeros(1, dtype=np.int64)  # each step's row in `level` (its place in `on`)
        got = {}
        out_of = dict(self.table.paths_out())
        for k in range(1, len(self.steps) + 1):
            on, par = self.steps[k - 1], at[self.parent[k - 1]]
            a, x = a_at[k - 1] + self.arrow[k - 1], s_at[k - 1] + self.set[k - 1]
            level = (  # the vectors in one compiled pass on large levels, same sums
                step_rows(level[0], par, vec, a, x),
                (level[1][par] + tokens[a]) + tokens[x],
                (level[2][par] + chars[a]) + chars[x],
            )
            at = np.full(self.table.lengths[k - 1].n, -1, dtype=np.int64)
            at[on] = np.arange(len(on))
            if k in out_of:
                got[k] = take(level, at[out_of[k]])
        return [got[k] for k, _ in self.table.paths_out()]

    def vectors(self, pieces: PieceEmbedder) -> np.ndarray:
        """pieces.embed(self.texts()), each text's vector summed from its pieces' (each
        distinct piece pooled once; a text the model would truncate is embedded whole):
        a 20,000-path question's texts hold ~520,000 words, its pieces a few thousand."""
        per = self._levels(pieces, lambda level, rows: tuple(y[rows] for y in level))
        if not per:
            return np.zeros((0, pieces.dim), dtype=np.float32)
        v, t, c = (np.concatenate([r[j] for r in per]) for j in range(3))
        out = pieces.normalize(v)
        long = pieces.truncates(t, c)
        if long.any():  # the model pools these itself (it truncates them)
            which = np.flatnonzero(long)
            out[which] = pieces.embed(self.texts_at(which.tolist()))
        return out

    def cosines(self, pieces: PieceEmbedder, query: np.ndarray) -> np.ndarray:
        """vectors(pieces) @ query for a unit `query`, without the vectors: each level's
        rows are dotted with the query and measured where they are (no gather, join or
        normalised copy of 20,000 x 256 floats: 20-25 ms of a hub question's fuzzy stage).
        Equal to the vectors' cosines within float rounding."""
        q = np.ascontiguousarray(query.reshape(-1), dtype=np.float32)

        def take(level, rows):  # type: ignore[no-untyped-def]
            vec = level[0]
            dots = vec @ q
            norms = np.sqrt(np.einsum("ij,ij->i", vec, vec))
            cos = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
            return cos[rows], level[1][rows], level[2][rows]

        per = self._levels(pieces, take)
        if not per:
            return np.zeros(0, dtype=np.float32)
        cos, t, c = (np.concatenate([r[j] for r in per]) for j in range(3))
        cos = cos.astype(np.float32)
        long = pieces.truncates(t, c)
        if long.any():  # the model pools these itself (it truncates them)
            which = np.flatnonzero(long)
            cos[which] = pieces.embed(self.texts_at(which.tolist())) @ q
        return cos


class PieceEmbedder(Protocol):
    """What TextTree.vectors needs of a static model (embed.static.StaticEmbedder.pieces)."""

    dim: int

    def piece_sums(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sum of token vectors, raw token count, characters) of each text."""
        ...

    def truncates(self, tokens: np.ndarray, chars: np.ndarray) -> np.ndarray: ...

    def normalize(self, sums: np.ndarray) -> np.ndarray: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def text_tree(
    t: FreeTable,
    names: Mapping[str, str],
    max_items: int | None,
    max_tokens: int | None,
    with_ids: bool,
) -> TextTree:
    """The pieces of render.render_paths' texts of every path, from the arrays: each set
    and arrow rendered once."""
    from kgreason.pog.render import _render_set  # (render imports this module)

    idx, heads = _heads(t, max_items)
    if max_tokens is None and not with_ids:
        shown = [_plain_sets(row, names, max_items) for row in heads]
    else:
        shown = [
            [_render_set(keys, n, names, max_items, max_tokens, with_ids) for keys, n in row]
            for row in heads
        ]
    memo: dict[tuple[int, ...], str] = {}
    arrows, steps, parents, arrow_of, set_of = [], [], [], [], []
    for k in range(1, len(t.lengths) + 1):
        st = t.lengths[k - 1]
        on = np.flatnonzero(idx[k] >= 0)
        parent = st.arrays()[0][on] if k > 1 else np.zeros(len(on), dtype=np.int64)
        distinct, of = _arrows(t, st.groups(), on, memo)
        arrows.append(distinct)
        arrow_of.append(of)
        steps.append(on)
        parents.append(np.asarray(parent, dtype=np.int64))
        set_of.append(idx[k][on])
    return TextTree(t, shown[0][0], arrows, shown[1:], steps, parents, arrow_of, set_of)


def texts(
    t: FreeTable,
    names: Mapping[str, str],
    max_items: int | None,
    max_tokens: int | None,
    with_ids: bool,
) -> list[str]:
    """render.render_paths of every path, in output order, from the arrays."""
    return text_tree(t, names, max_items, max_tokens, with_ids).texts()
