"""Running the app under uvicorn, with a graceful shutdown: on SIGINT/SIGTERM uvicorn stops
accepting, lets in-flight requests (questions, streams) finish for up to the grace period,
then the app's lifespan drains and closes the warm state."""

from __future__ import annotations

import math
import socket
from collections.abc import Callable
from types import FrameType

import uvicorn

import kgreason
from kgreason.server.app import create_app
from kgreason.server.config import ServerConfig, check_bind
from kgreason.server.protocol import with_head_timeout
from kgreason.server.service import Service


class GracefulServer(uvicorn.Server):
    """uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, so the process would end
    "killed by signal"; a completed graceful shutdown exits 0 instead."""

    #: told "http://HOST:PORT/" once listening (the real port when --port 0 was asked)
    announce: Callable[[str], None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self.announce is not None:
            for server in self.servers:
                for sock in server.sockets:
                    host, port = sock.getsockname()[:2]
                    self.announce(f"http://{f'[{host}]' if ':' in host else host}:{port}/")

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        captured = getattr(self, "_captured_signals", None)
        if isinstance(captured, list):
            captured.clear()


def uvicorn_server(
    service: Service, config: ServerConfig, *, log_level: str = "info", close_service: bool = True
) -> GracefulServer:
    """A `uvicorn.Server` for the app (not started): `.run()` blocks; tests run it on a
    thread and stop it with `should_exit = True`, as SIGTERM does."""
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
        http=with_head_timeout(config.header_timeout_s),  # and their time (slowloris)
    )
    return GracefulServer(uv)


def serve(
    service: Service,
    config: ServerConfig,
    *,
    log_level: str = "info",
    announce: Callable[[str], None] | None = None,
    sockets: list[socket.socket] | None = None,
) -> None:
    """Run until SIGTERM/SIGINT; `sockets`: listen on these (a `--workers` worker's
    inherited socket) instead of binding config.host:config.port."""
    server = uvicorn_server(service, config, log_level=log_level)
    server.announce = announce
    kgreason.warm_kernels(service.kg)  # a large local KG: PoG's kernels compiled before questions
    kgreason.freeze_warm_state()  # the loaded service is permanent: collections skip it
    server.run(sockets=sockets)
