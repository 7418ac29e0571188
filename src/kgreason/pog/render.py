"""Path text as the paper renders it, with IDs so an answer can be traced back:

    {m.x: Nijmegen} -> location.location.nearby_airports -> {m.y: Weeze Airport}
    -> location.location.containedby -> {m.z: Germany}

A backward hop (the KG triple runs dst -relation-> src) is written `<- relation <-`. A hop
that clusters several relations joining the same two sets lists them after the first:
`-> location.location.containedby | location.location.contains (inverse) ->`, where
"(inverse)" marks a relation that runs against the arrow.
Names come from a name map (D(.)); unnamed nodes show as "Unnamed Entity", unknown ids as
the id alone. The paper writes every member of a set (Appendix E: {e_0x, ..., e_0z}), so LLM
prompts show full sets (`max_items=None`), bounded by `max_tokens` per set: a hub hop can hold
thousands of entities, which no prompt can take. A set over either bound shows its first
members (sorted by id) and "... (+N more)"; the full set stays in the Hop, and
`shown_count` tells the pruner which sets were cut, so the pipeline can report them. Tokens are estimated at 4 characters each
(cl100k's average on English names) to keep rendering free of a tokenizer.
Sentence-embedder inputs (pog/fuzzy.py) keep their own small cap, EMBED_MAX_ITEMS.
A hop reads its sets through `Hop.view` and `Hop.prefetch` (pog/types.py), so a form whose
hops keep their sets as ids (kgreason.pog.arrays) decodes only the members a capped
rendering shows, for all sets at once; `render_paths` and `displayed_ids` are operations a
backend may do its own way (pog/backend.py).

`NameBook` fetches D(.) lazily from any KnowledgeGraph and caches it for one question.

API:
    render_path(path, names, *, max_items=DEFAULT_MAX_ITEMS, max_tokens=None, with_ids=True)
    render_paths(paths, names, ...) -> list[str]  (the same, each distinct set rendered once)
    render_set(ids, names, ...) -> str
    shown_count(ids, names, *, max_items, max_tokens) -> int
    displayed_ids(paths, max_items, max_tokens=None) -> set[str]
    NameBook(kg); await book.ensure(ids); book.names (dict); book.get(id)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kgreason.kg.base import KnowledgeGraph
from kgreason.pog.backend import dispatch
from kgreason.pog.types import Hop, ReasoningPath

if TYPE_CHECKING:
    from kgreason.pog.clustering import ClusteredGraph

#: the default cap for displays (the CLI's path listing); prompts use PoGSettings.set_items
DEFAULT_MAX_ITEMS = 8
#: characters per token in the budget estimate
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class SetCut:
    """One entity set shown in part: `shown` of `total` members."""

    total: int
    shown: int


def approx_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def _member(i: str, names: Mapping[str, str], with_ids: bool) -> str:
    name = names.get(i)
    if with_ids:
        return f"{i}: {name}" if name and name != i else i
    return name or i


def _shown(
    ids: Sequence[str],
    names: Mapping[str, str],
    max_items: int | None,
    max_tokens: int | None,
    with_ids: bool,
) -> list[str]:
    """The members a rendering shows: at most `max_items`, within `max_tokens` (at least
    one member, so a set is never shown empty). `ids` may hold only the first `max_items`
    members of the set (Hop.view)."""
    limit = len(ids) if max_items is None else min(len(ids), max_items)
    if max_tokens is None:  # no budget to count (fuzzy ranking renders thousands of sets)
        return [_member(i, names, with_ids) for i in ids[:limit]]
    shown: list[str] = []
    used = 0
    for i in ids[:limit]:
        text = _member(i, names, with_ids)
        cost = approx_tokens(text + ", ")
        if shown and used + cost > max_tokens:
            break
        shown.append(text)
        used += cost
    return shown


def render_set(
    ids: Sequence[str],
    names: Mapping[str, str],
    *,
    max_items: int | None = DEFAULT_MAX_ITEMS,
    max_tokens: int | None = None,
    with_ids: bool = True,
) -> str:
    return _render_set(ids, len(ids), names, max_items, max_tokens, with_ids)


def _render_set(
    head: Sequence[str],
    total: int,
    names: Mapping[str, str],
    max_items: int | None,
    max_tokens: int | None,
    with_ids: bool,
) -> str:
    """render_set of a set of `total` members whose first members are `head` (at least the
    first `max_items`)."""
    shown = _shown(head, names, max_items, max_tokens, with_ids)
    more = f", ... (+{total - len(shown)} more)" if total > len(shown) else ""
    return "{" + ", ".join(shown) + more + "}"


def render_path(
    path: ReasoningPath,
    names: Mapping[str, str],
    *,
    max_items: int | None = DEFAULT_MAX_ITEMS,
    max_tokens: int | None = None,
    with_ids: bool = True,
) -> str:
    return render_paths(
        [path], names, max_items=max_items, max_tokens=max_tokens, with_ids=with_ids
    )[0]


def shown_sides(paths: Iterable[ReasoningPath]) -> list[tuple[Hop, bool]]:
    """The sets a rendering of `paths` shows, as (hop, dst): each path's first src, every
    hop's dst."""
    out: list[tuple[Hop, bool]] = []
    for p in paths:
        if p.hops:
            out.append((p.hops[0], False))
            out += [(h, True) for h in p.hops]
    return out


def prefetch(paths: Iterable[ReasoningPath], k: int | None) -> list[tuple[Hop, bool]]:
    """Ready the first k members of every set a rendering shows (each form of hop in one
    batch, Hop.prefetch); the shown sets, as shown_sides."""
    sides = shown_sides(paths)
    if k is not None:
        by_form: dict[type[Hop], list[tuple[Hop, bool]]] = {}
        for side in sides:
            by_form.setdefault(type(side[0]), []).append(side)
        for form, group in by_form.items():
            form.prefetch(group, k)
    return sides


def render_paths(
    paths: Sequence[ReasoningPath],
    names: Mapping[str, str],
    *,
    max_items: int | None = DEFAULT_MAX_ITEMS,
    max_tokens: int | None = None,
    with_ids: bool = True,
) -> list[str]:
    """render_path of each path (the keywords' defaults applied, then `render_texts`)."""
    return render_texts(paths, names, max_items, max_tokens, with_ids)


@dispatch
def render_texts(
    paths: Sequence[ReasoningPath],
    names: Mapping[str, str],
    max_items: int | None,
    max_tokens: int | None,
    with_ids: bool,
) -> list[str]:
    """render_path of each path. Paths share sets (a path's prefix is another path), so
    each distinct set (by identity) is rendered once, and the shown members of all sets
    are read in one batch (prefetch)."""
    prefetch(paths, max_items)
    memo: dict[int, str] = {}

    def show(h: Hop, dst: bool) -> str:
        obj = h.side(dst)
        got = memo.get(id(obj))
        if got is None:
            head, total = h.view(dst, max_items)
            got = memo[id(obj)] = _render_set(head, total, names, max_items, max_tokens, with_ids)
        return got

    steps: dict[int, str] = {}  # a hop's arrow and end set, by identity (prefixes share hops)

    def step(h: Hop) -> str:
        got = steps.get(id(h))
        if got is None:
            got = steps[id(h)] = step_arrow(h.relation_keys()) + show(h, True)
        return got

    return [
        show(path.hops[0], False) + "".join(map(step, path.hops)) if path.hops else ""
        for path in paths
    ]


def step_arrow(keys: Sequence[tuple[str, bool]]) -> str:
    """A hop's arrow with its relations (primary first): ` -> r | r2 (inverse) -> `."""
    (rel, fwd), *alts = keys
    label = rel + "".join(f" | {r}" if f == fwd else f" | {r} (inverse)" for r, f in alts)
    return f" -> {label} -> " if fwd else f" <- {label} <- "


def shown_count(
    ids: Sequence[str],
    names: Mapping[str, str],
    *,
    max_items: int | None,
    max_tokens: int | None,
    with_ids: bool = True,
) -> int:
    """How many members of `ids` a rendering with these bounds shows."""
    return len(_shown(ids, names, max_items, max_tokens, with_ids))


def displayed_ids(
    paths: Iterable[ReasoningPath],
    max_items: int | None = DEFAULT_MAX_ITEMS,
    max_tokens: int | None = None,
) -> set[str]:
    """The ids a rendering may show (fetch only these names)."""
    return shown_ids(paths, member_cap(max_items, max_tokens))


def member_cap(max_items: int | None, max_tokens: int | None) -> int | None:
    """The most members of a set a rendering with these bounds shows: every member costs at
    least one token, so a token budget of T never shows more than T."""
    caps = [c for c in (max_items, max_tokens) if c is not None]
    return min(caps) if caps else None


@dispatch
def shown_names(
    graph: ClusteredGraph, paths: Sequence[ReasoningPath], cap: int | None
) -> dict[str, str] | None:
    """The display names of shown_ids(paths, cap), where the form of the graph holds them
    without a lookup by key (a store's array graph); None otherwise (the reference: look
    them up)."""
    return None


@dispatch
def shown_ids(paths: Iterable[ReasoningPath], cap: int | None) -> set[str]:
    """The first `cap` members (all, when None) of every set a rendering shows."""
    out: set[str] = set()
    for h, dst in prefetch(paths, cap):
        out.update(h.view(dst, cap)[0])
    return out


class NameBook:
    """D(.) with a per-question cache, fetched in batches from any KG backend."""

    def __init__(self, kg: KnowledgeGraph, names: Mapping[str, str] | None = None):
        self._kg = kg
        self.names: dict[str, str] = dict(names or {})

    async def ensure_shown(
        self,
        graph: ClusteredGraph,
        paths: Sequence[ReasoningPath],
        max_items: int | None = DEFAULT_MAX_ITEMS,
        max_tokens: int | None = None,
    ) -> dict[str, str]:
        """ensure(displayed_ids(paths, ...)) of paths found on `graph`, from the graph's own
        names where its form has them (shown_names), else through the KG."""
        cap = member_cap(max_items, max_tokens)
        got = shown_names(graph, paths, cap)
        if got is None:
            return await self.ensure(shown_ids(paths, cap))
        for i, name in got.items():
            self.names.setdefault(i, name)
        return self.names

    async def ensure(self, ids: Iterable[str]) -> dict[str, str]:
        todo = [i for i in dict.fromkeys(ids) if i not in self.names]
        if todo:
            got = await self._kg.names(todo)
            self.names.update(got)
            for i in todo:
                self.names.setdefault(i, i)
        return self.names

    def get(self, entity: str) -> str:
        return self.names.get(entity, entity)
