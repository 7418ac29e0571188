"""POST /v1/ask, /v1/ask/stream (Server-Sent Events), /v1/solve, /v1/explain."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Body, Depends
from fastapi.responses import StreamingResponse

from kgreason.server.deps import BEARER, AppState, state
from kgreason.server.models import AskRequest, ExplainRequest, SolveRequest
from kgreason.server.service import ServiceError, stage_event_dict
from kgreason.tracing import StageEvent

router = APIRouter(prefix="/v1", tags=["questions"], dependencies=BEARER)
log = logging.getLogger("kgreason.server")

#: an SSE comment this often keeps proxies from closing a quiet stream (seconds)
KEEPALIVE_S = 15.0


def _record(st: AppState, out: dict[str, Any]) -> None:
    st.metrics.record_usage(out.get("usage"))
    st.metrics.record_error(out.get("error_kind"))


@router.post("/ask", summary="Answer a question with PoG (or the LLM-free mode)")
async def ask(req: AskRequest, st: AppState = Depends(state)) -> dict[str, Any]:
    out = await st.service.ask(req)
    _record(st, out)
    return out


def sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


@router.post(
    "/ask/stream",
    summary="The same as /v1/ask, as Server-Sent Events",
    description="`event: stage` per stage start/end (sizes, timings, LLM usage), then "
    "exactly one `event: result` (the /v1/ask body) or `event: error`.",
    response_class=StreamingResponse,
)
async def ask_stream(req: AskRequest, st: AppState = Depends(state)) -> StreamingResponse:
    queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
    failure: list[ServiceError] = []

    def on_stage(ev: StageEvent) -> None:
        queue.put_nowait(("stage", stage_event_dict(ev)))

    async def run() -> None:
        try:
            out = await st.service.ask(req, on_stage)
        except ServiceError as e:
            failure.append(e)  # counted where it is reported (stream or error response)
            queue.put_nowait(("error", e.to_dict()))
            return
        except Exception as e:  # reported in the stream and logged; the server keeps running
            log.exception("ask/stream failed")
            queue.put_nowait(("error", {"error_kind": "internal", "message": _msg(e)}))
            return
        _record(st, out)
        queue.put_nowait(("result", out))

    task = asyncio.create_task(run())
    await asyncio.sleep(0)  # the task checks the request and the limits before its first await
    if task.done() and failure and queue.qsize() == 1:
        raise failure[0]  # refused before any stage ran: a plain error status (429, 400...)

    async def events() -> AsyncIterator[str]:
        try:
            while True:
                try:
                    kind, data = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if kind == "error":
                    st.metrics.record_error(data.get("error_kind"))
                yield sse(kind, data)
                if kind != "stage":
                    return
        finally:
            if not task.done():
                task.cancel()  # the client went away: stop the question

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


def _msg(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


@router.post("/solve", summary="SymbolLKG on a text, or an existing solver program (no LLM)")
async def solve(req: SolveRequest, st: AppState = Depends(state)) -> dict[str, Any]:
    out = await st.service.solve(req)
    _record(st, out)
    return out


@router.post("/explain", summary="The triples a result's paths cite, each checked in the KG")
async def explain(
    result: ExplainRequest = Body(..., description="A /v1/ask result (its `paths` are read)."),
    st: AppState = Depends(state),
) -> dict[str, Any]:
    return await st.service.aexplain(result)
