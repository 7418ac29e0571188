"""Path text as the paper renders it, with IDs so an answer can be traced back:

    {m.x: Nijmegen} -> location.location.nearby_airports -> {m.y: Weeze Airport}
    -> location.location.containedby -> {m.z: Germany}

A backward hop (the KG triple runs dst -relation-> src) is written `<- relation <-`. A hop
that clusters several relations joining the same two sets lists them after the first:
`-> location.location.containedby | location.location.contains (inverse) ->`, where
"(inverse)" marks a relation that runs against the arrow.
Names come from a name map (D(.)); unnamed nodes show as "Unnamed Entity", unknown ids as
the id alone. Sets larger than `max_items` show their first members (sorted by id) and
"... (+N more)": a hub hop can hold thousands of entities, which neither an LLM prompt nor a
sentence embedder can take; the full set stays in the Hop.

`NameBook` fetches D(.) lazily from any KnowledgeGraph and caches it for one question.

API:
    render_path(path, names, *, max_items=DEFAULT_MAX_ITEMS, with_ids=True) -> str
    render_set(ids, names, ...) -> str
    displayed_ids(paths, max_items) -> set[str]
    NameBook(kg); await book.ensure(ids); book.names (dict); book.get(id)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kgreason.kg.base import KnowledgeGraph
from kgreason.pog.types import ReasoningPath

DEFAULT_MAX_ITEMS = 8


def render_set(
    ids: Sequence[str],
    names: Mapping[str, str],
    *,
    max_items: int = DEFAULT_MAX_ITEMS,
    with_ids: bool = True,
) -> str:
    shown = []
    for i in ids[:max_items]:
        name = names.get(i)
        if with_ids:
            shown.append(f"{i}: {name}" if name and name != i else i)
        else:
            shown.append(name or i)
    more = f", ... (+{len(ids) - max_items} more)" if len(ids) > max_items else ""
    return "{" + ", ".join(shown) + more + "}"


def render_path(
    path: ReasoningPath,
    names: Mapping[str, str],
    *,
    max_items: int = DEFAULT_MAX_ITEMS,
    with_ids: bool = True,
) -> str:
    if not path.hops:
        return ""
    parts = [render_set(path.hops[0].src, names, max_items=max_items, with_ids=with_ids)]
    for h in path.hops:
        label = h.relation + "".join(
            f" | {r}" if f == h.forward else f" | {r} (inverse)" for r, f in h.alt_relations
        )
        arrow = f" -> {label} -> " if h.forward else f" <- {label} <- "
        parts.append(arrow + render_set(h.dst, names, max_items=max_items, with_ids=with_ids))
    return "".join(parts)


def displayed_ids(paths: Iterable[ReasoningPath], max_items: int = DEFAULT_MAX_ITEMS) -> set[str]:
    """The ids a rendering shows (fetch only these names)."""
    out: set[str] = set()
    for p in paths:
        for j, h in enumerate(p.hops):
            if j == 0:
                out.update(h.src[:max_items])
            out.update(h.dst[:max_items])
    return out


class NameBook:
    """D(.) with a per-question cache, fetched in batches from any KG backend."""

    def __init__(self, kg: KnowledgeGraph, names: Mapping[str, str] | None = None):
        self._kg = kg
        self.names: dict[str, str] = dict(names or {})

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
