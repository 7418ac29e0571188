"""GET /, /static/..., /docs (offline Swagger UI), /healthz, /metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, Response

from kgreason.server.deps import BEARER, AppState, state

STATIC_DIR = Path(__file__).parent / "static"
SWAGGER = "/static/vendor/swagger-ui"

router = APIRouter()


@router.get("/", include_in_schema=False)
async def index() -> Response:
    page = STATIC_DIR / "explorer" / "index.html"
    if page.is_file():
        return FileResponse(page, media_type="text/html")
    return HTMLResponse(
        "<!doctype html><title>kgreason</title><h1>kgreason server</h1>"
        "<p>The web explorer is not installed here (no <code>server/static/explorer/"
        "index.html</code>). The API works: see <a href='/docs'>/docs</a>.</p>",
        status_code=404,
    )


@router.get("/docs", include_in_schema=False)
async def docs() -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="kgreason API",
        swagger_js_url=f"{SWAGGER}/swagger-ui-bundle.js",
        swagger_css_url=f"{SWAGGER}/swagger-ui.css",
        swagger_favicon_url="data:,",  # no request for an icon (and none to a CDN)
    )


@router.get("/healthz", tags=["server"], summary="Liveness and load")
async def healthz(st: AppState = Depends(state)) -> dict[str, Any]:
    info = st.service.info()
    info["kg"] = Path(info["kg"]).name or info["kg"]  # not the server's file layout
    return {"status": "ok", **info}


@router.get("/metrics", tags=["server"], response_class=PlainTextResponse, dependencies=BEARER)
async def metrics(st: AppState = Depends(state)) -> PlainTextResponse:
    gauges = {
        "kgreason_questions_inflight": float(st.service.inflight),
        "kgreason_questions_max_concurrency": float(st.service.limits.max_concurrency),
    }
    return PlainTextResponse(
        st.metrics.render(gauges), media_type="text/plain; version=0.0.4; charset=utf-8"
    )
