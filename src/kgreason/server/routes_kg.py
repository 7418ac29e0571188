"""GET /v1/kg/search and /v1/kg/entity/{id}: names and paged neighbours from the warm KG."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from kgreason.server.deps import BEARER, AppState, state

router = APIRouter(prefix="/v1/kg", tags=["kg"], dependencies=BEARER)


@router.get("/search", summary="Entities whose name matches q, best first")
async def search(
    q: str = Query(..., min_length=1, max_length=500),
    limit: int = Query(10, ge=1, le=100),
    st: AppState = Depends(state),
) -> dict[str, Any]:
    return {"items": await st.service.asearch(q, limit)}


@router.get("/entity/{id:path}", summary="An entity's name and one page of its neighbours")
async def entity(
    id: str,
    offset: int = Query(0, ge=0),
    limit: int = Query(50, ge=1, le=500),
    st: AppState = Depends(state),
) -> dict[str, Any]:
    return await st.service.aentity(id, offset, limit)
