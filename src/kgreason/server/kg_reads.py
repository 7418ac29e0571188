"""The KG reads of the service: entity search, an entity's neighbours page by page, and
the check of the triples a result cites. Every KG backend's reads are coroutines; the
`a`-prefixed methods are the ones to await, the others block (for sync callers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

import kgreason
from kgreason.server.errors import ServiceError
from kgreason.server.models import MAX_ID, ExplainRequest, brief

if TYPE_CHECKING:
    from kgreason import KnowledgeGraph


class KGReads:
    """Mixed into `Service`, which sets `kg`."""

    kg: KnowledgeGraph

    async def asearch(self, q: str, limit: int = 10) -> list[dict[str, Any]]:
        """Entities whose name matches `q`, best first: [{"id","name","score","kind"}].
        Prefix-aware (`kind: "prefix"`, after exact and normalised matches, before fuzzy
        ones): a search box sends partial words while the user types."""
        if not q.strip():
            raise ServiceError("bad-request", "the search text is empty", 400)
        matches = await self.kg.search(q, limit=max(1, min(limit, 100)), prefix=True)
        return [{"id": m.id, "name": m.name, "score": m.score, "kind": m.kind} for m in matches]

    async def aentity(self, id: str, offset: int = 0, limit: int = 50) -> dict[str, Any]:
        """An entity's name and one page of its neighbours (sorted, so pages are stable)."""
        if offset < 0 or not 1 <= limit <= 500:
            raise ServiceError("bad-request", "need offset >= 0 and 1 <= limit <= 500", 400)
        if len(id) > MAX_ID:
            raise ServiceError("bad-request", f"an entity id is at most {MAX_ID} characters", 400)
        try:
            names = await self.kg.names([id])
        except kgreason.KGError as e:
            raise ServiceError("kg-error", str(e), 400) from e
        if id not in names:
            raise ServiceError("unknown-entity", f"no entity {id!r} in the KG", 404)
        nbrs = (await self.kg.neighbors([id])).get(id, [])
        rows = sorted(
            (n.relation, "out" if n.direction == "tail" else "in", n.entity) for n in nbrs
        )
        page = rows[offset : offset + limit]
        shown = await self.kg.names(sorted({e for _, _, e in page})) if page else {}
        return {
            "id": id,
            "name": names[id],
            "neighbours": [
                {"relation": r, "direction": d, "id": e, "name": shown.get(e, e)}
                for r, d, e in page
            ],
            "total": len(rows),
            "next_offset": offset + limit if offset + limit < len(rows) else None,
        }

    async def aexplain(self, result: dict[str, Any] | ExplainRequest) -> dict[str, Any]:
        """The triples a result's paths cite, each checked against the KG now."""
        if not isinstance(result, ExplainRequest):
            try:
                result = ExplainRequest.model_validate(result)
            except ValidationError as e:
                raise ServiceError(
                    "bad-request", f"not a result with paths: {brief(e)}", 400
                ) from e
        triples = list(
            dict.fromkeys(
                kgreason.Triple(t.head, t.relation, t.tail)
                for p in result.paths
                for hop in p.hops
                for t in hop.triples
            )
        )
        ok = await self.kg.contains(triples) if triples else []
        rows = [
            {"head": t.head, "relation": t.relation, "tail": t.tail, "verified": bool(v)}
            for t, v in zip(triples, ok, strict=True)
        ]
        return {
            "answers": [a.model_dump() for a in result.answers],
            "triples": rows,
            "verified": sum(r["verified"] for r in rows),
            "unverified": sum(not r["verified"] for r in rows),
        }

    def search(self, q: str, limit: int = 10) -> list[dict[str, Any]]:
        return kgreason.run_sync(self.asearch(q, limit))

    def entity(self, id: str, offset: int = 0, limit: int = 50) -> dict[str, Any]:
        return kgreason.run_sync(self.aentity(id, offset, limit))

    def explain(self, result: dict[str, Any] | ExplainRequest) -> dict[str, Any]:
        return kgreason.run_sync(self.aexplain(result))
