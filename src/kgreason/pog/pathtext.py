"""Paths of a free search's table (pog/pathtable.py) rendered from its arrays (issue 15).

Why: fuzzy ranking renders every path a search found (up to 20,000 on a 10M-triple hub
question) and keeps a few dozen; rendering through path objects made one per path and
rendered each hop of each path. Here each distinct set (by its range of a level's node
pool) and each distinct hop arrow is rendered once, and a path's text is its prefix's
text plus its last step's: render.render_paths of a 20,000-path question went from
114-168 to 36-40 ms, and displayed_ids from 37-52 to 10-19 ms (the same texts and ids as
the objects': tests/pog/test_pathtable.py).

API (what render.render_paths and render.displayed_ids call for TablePaths):
    texts(table, names, max_items, max_tokens, with_ids) -> list[str]   (output order)
    shown_ids(table, cap) -> set[str]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kgreason.kg.store.build_index import ranges

if TYPE_CHECKING:
    from kgreason.pog.pathtable import FreeTable, Groups


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
    return [np.zeros(1, dtype=np.int64), *(i for i, _ in per)], out


def shown_ids(t: FreeTable, cap: int | None) -> set[str]:
    """The keys a rendering capped at `cap` members per set shows (displayed_ids)."""
    _, heads = _heads(t, cap)
    return {x for row in heads for keys, _ in row for x in keys}


def _arrows(t: FreeTable, groups: Groups, steps: list[int], memo: dict[tuple[int, ...], str]):
    """render.step_arrow of each of `steps`' hops, once per distinct key group."""
    from kgreason.pog.render import step_arrow  # (render imports this module)

    for c in np.unique(groups.key).tolist():
        if (c,) not in memo:
            memo[(c,)] = step_arrow(t.maker.keys((c,)))
    out = [memo[(c,)] for c in groups.key[steps].tolist()]
    if groups.alts:
        at = {i: j for j, i in enumerate(steps)}
        for i in groups.alts:
            if i in at:
                codes = groups[i]
                got = memo.get(codes)
                if got is None:
                    got = memo[codes] = step_arrow(t.maker.keys(codes))
                out[at[i]] = got
    return out


def texts(
    t: FreeTable,
    names: Mapping[str, str],
    max_items: int | None,
    max_tokens: int | None,
    with_ids: bool,
) -> list[str]:
    """render.render_paths of every path, in output order, from the arrays: a step's
    text is its prefix's text, its hop's arrow and its set, each rendered once."""
    from kgreason.pog.render import _render_set  # (render imports this module)

    idx, heads = _heads(t, max_items)
    shown = [
        [_render_set(keys, n, names, max_items, max_tokens, with_ids) for keys, n in row]
        for row in heads
    ]
    text: list[list[str]] = [shown[0][:1]]
    memo: dict[tuple[int, ...], str] = {}
    for k in range(1, len(t.lengths) + 1):
        st = t.lengths[k - 1]
        steps = np.flatnonzero(idx[k] >= 0)
        parent = st.arrays()[0][steps].tolist() if k > 1 else [0] * len(steps)
        prev, sets = text[k - 1], shown[k]
        tk = [""] * st.n
        for i, p, arrow, x in zip(
            steps.tolist(),
            parent,
            _arrows(t, st.groups(), steps.tolist(), memo),
            idx[k][steps].tolist(),
            strict=True,
        ):
            tk[i] = prev[p] + arrow + sets[x]
        text.append(tk)
    out: list[str] = []
    for k, order in t.paths_out():
        tk = text[k]
        out += [tk[i] for i in order.tolist()]
    return out
