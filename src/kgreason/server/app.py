"""The FastAPI app: routes, error shapes, middleware, and a lifespan that drains in-flight
questions before the warm state is closed."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

import kgreason
from kgreason.server import routes_kg, routes_questions, routes_results, routes_runs, routes_site
from kgreason.server.config import ServerConfig, is_loopback
from kgreason.server.deps import AppState
from kgreason.server.metrics import Metrics
from kgreason.server.middleware import (
    BodyLimitMiddleware,
    LocalOnlyMiddleware,
    MetricsMiddleware,
    TokenMiddleware,
)
from kgreason.server.models import brief
from kgreason.server.service import Service, ServiceError

log = logging.getLogger("kgreason.server")

DESCRIPTION = (
    "PoG question answering over a knowledge graph and SymbolLKG logical reasoning, with the "
    "evidence: reasoning paths with every cited triple checked, stage timings and LLM usage. "
    "Errors are JSON `{error_kind, message}`. With a token set, /v1 and /metrics need "
    "`Authorization: Bearer TOKEN`."
)

#: FastAPI's detail when reading the JSON body raised (not a JSONDecodeError, which is a 422)
FASTAPI_PARSE_ERROR = "There was an error parsing the body"
BODY_NOT_JSON = (
    "the request body is not JSON this server can read: invalid UTF-8, nesting deeper "
    "than the parser allows, or an integer of more than 4300 digits"
)


def _error(status: int, kind: str, message: str, headers: dict[str, str] | None = None):
    return JSONResponse({"error_kind": kind, "message": message}, status, headers=headers)


def create_app(
    service: Service, config: ServerConfig | None = None, *, close_service: bool = True
) -> FastAPI:
    """The app over a warm service. At shutdown (after uvicorn has let in-flight requests
    finish) the service is drained once more and, with `close_service`, closed."""
    cfg = config or ServerConfig()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if not await service.drain(timeout=cfg.shutdown_grace_s):
            log.warning("shutting down with %d question(s) still running", service.inflight)
        if close_service:
            await service.aclose()

    app = FastAPI(
        title="kgreason",
        version=kgreason.__version__,
        description=DESCRIPTION,
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.kg = AppState(service, metrics, cfg)

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, e: ServiceError) -> JSONResponse:
        metrics.record_error(e.kind)
        headers = {"Retry-After": str(e.retry_after)} if e.retry_after is not None else None
        return _error(e.status, e.kind, e.message, headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, e: RequestValidationError) -> JSONResponse:
        return _error(422, "bad-request", brief(e.errors()))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, e: HTTPException) -> JSONResponse:
        kind = {400: "bad-request", 404: "not-found", 405: "method-not-allowed"}.get(
            e.status_code, "http-error"
        )
        message = str(e.detail)
        if message == FASTAPI_PARSE_ERROR:  # what FastAPI says for any body json.loads refused
            message = BODY_NOT_JSON
        return _error(e.status_code, kind, message, getattr(e, "headers", None))

    @app.exception_handler(Exception)
    async def internal(request: Request, e: Exception) -> JSONResponse:
        log.exception("%s %s failed", request.method, request.url.path)
        return _error(500, "internal", f"{type(e).__name__}: {e}")

    for r in (routes_questions, routes_results, routes_kg, routes_runs, routes_site):
        app.include_router(r.router)
    app.mount("/static", StaticFiles(directory=routes_site.STATIC_DIR), name="static")
    # added last = outermost: metrics see every refusal; the token is checked before a body
    # is read
    app.add_middleware(BodyLimitMiddleware, max_body=cfg.max_body, timeout_s=cfg.body_timeout_s)
    app.add_middleware(TokenMiddleware, token=cfg.token)
    app.add_middleware(
        LocalOnlyMiddleware, enabled=is_loopback(cfg.host), token_set=cfg.token is not None
    )
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    return app
