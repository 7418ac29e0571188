"""What routes get from the app: the service, the metrics and the server config."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

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
