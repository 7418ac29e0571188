"""What routes get from the app: the service, the metrics and the server config."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Depends, Request
from fastapi.security import HTTPBearer

from kgreason.server.config import ServerConfig
from kgreason.server.metrics import Metrics
from kgreason.server.service import Service


@dataclass
class AppState:
    service: Service
    metrics: Metrics
    config: ServerConfig


def state(request: Request) -> AppState:
    st: AppState = request.app.state.kg
    return st


#: declares the bearer token in the OpenAPI spec (so /docs has "Authorize"); the check
#: itself is TokenMiddleware's, which runs before any route
BEARER = [
    Depends(
        HTTPBearer(
            auto_error=False,
            description="Needed when the server runs with --token / KGREASON_SERVER__TOKEN.",
        )
    )
]
