"""GET /v1/runs and /v1/runs/{name}: eval runs under --runs-dir, read-only."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Query

from kgreason.server.deps import BEARER, AppState, state
from kgreason.server.runs import RunsError, list_runs, read_run
from kgreason.server.service import ServiceError

router = APIRouter(prefix="/v1/runs", tags=["runs"], dependencies=BEARER)


def _root(st: AppState) -> Path:
    if st.config.runs_dir is None:
        raise ServiceError("no-runs-dir", "the server was started without --runs-dir", 404)
    return st.config.runs_dir


@router.get("", summary="Eval run directories (newest first)")
async def runs(
    dir: str | None = Query(None, max_length=500, description="A folder inside --runs-dir."),
    st: AppState = Depends(state),
) -> dict[str, Any]:
    root = _root(st)
    try:
        items = await asyncio.to_thread(list_runs, root, dir)
    except RunsError as e:
        raise ServiceError(e.kind, str(e), e.status) from e
    return {"items": items}


@router.get("/{name:path}", summary="One run: config, figures, report and result rows")
async def run(
    name: str,
    offset: int = Query(0, ge=0),
    limit: int = Query(100, ge=1, le=1000),
    st: AppState = Depends(state),
) -> dict[str, Any]:
    root = _root(st)
    try:
        return await asyncio.to_thread(read_run, root, name, offset, limit)
    except RunsError as e:
        raise ServiceError(e.kind, str(e), e.status) from e
