"""GET /v1/results/{id}/sets/{k} and /v1/results/{id}/answers: the rest of a reply's sets.

A reply shows the first members of each large set and its count, and links to these pages
(`pages` in the /v1/ask reply; server/results.py says what is kept and for how long)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Path, Query

from kgreason.server.deps import BEARER, AppState, state
from kgreason.server.results import DEFAULT_PAGE, MAX_PAGE

router = APIRouter(prefix="/v1/results", tags=["results"], dependencies=BEARER)

RID = Path(..., min_length=1, max_length=100, pattern=r"^[A-Za-z0-9-]+$")
OFFSET = Query(0, ge=0, le=10**9, description="The first member of the page.")
LIMIT = Query(DEFAULT_PAGE, ge=1, le=MAX_PAGE, description="Members in the page.")


@router.get("/{rid}/sets/{k}", summary="One page of a result's set k (its members, in order)")
async def result_set(
    rid: str = RID,
    k: int = Path(..., ge=0, le=10**6),
    offset: int = OFFSET,
    limit: int = LIMIT,
    st: AppState = Depends(state),
) -> dict[str, Any]:
    return await st.service.result_page(rid, k, offset, limit)


@router.get("/{rid}/answers", summary="One page of a result's answers")
async def result_answers(
    rid: str = RID, offset: int = OFFSET, limit: int = LIMIT, st: AppState = Depends(state)
) -> dict[str, Any]:
    return await st.service.result_page(rid, None, offset, limit)
