"""Running the app under uvicorn, with a graceful shutdown: on SIGINT/SIGTERM uvicorn stops
accepting, lets in-flight requests (questions, streams) finish for up to the grace period,
then the app's lifespan drains and closes the warm state."""

from __future__ import annotations

import math
from typing import Any

from kgreason.server.app import create_app
from kgreason.server.config import ServerConfig, check_bind
from kgreason.server.service import Service


def uvicorn_server(
    service: Service, config: ServerConfig, *, log_level: str = "info", close_service: bool = True
) -> Any:
    """A `uvicorn.Server` for the app (not started): `.run()` blocks; tests run it on a
    thread and stop it with `should_exit = True`, as SIGTERM does."""
    import uvicorn

    check_bind(config.host, config.token)
    app = create_app(service, config, close_service=close_service)
    uv = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=math.ceil(config.shutdown_grace_s),
        server_header=False,
        proxy_headers=False,  # never trust X-Forwarded-* from whoever connects
        h11_max_incomplete_event_size=64 * 1024,  # bounded request line and headers
    )
    return uvicorn.Server(uv)


def serve(service: Service, config: ServerConfig, *, log_level: str = "info") -> None:
    uvicorn_server(service, config, log_level=log_level).run()
