"""The real server on a free 127.0.0.1 port: uvicorn on a thread (the same `uvicorn_server`
the CLI runs), so tests can hold a question in flight with a gate and then stop the server
the way SIGTERM does (`should_exit`)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from kgreason.server.config import ServerConfig
from kgreason.server.run import uvicorn_server
from kgreason.server.service import Service


@dataclass
class Live:
    url: str
    server: Any
    thread: threading.Thread

    def client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=kw.pop("timeout", 60), **kw)

    def stop(self, timeout: float = 60) -> None:
        self.server.should_exit = True  # what uvicorn's SIGTERM handler sets
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the server did not stop"


@contextmanager
def live_server(service: Service, **config: Any) -> Iterator[Live]:
    cfg = ServerConfig(host="127.0.0.1", port=0, **config)
    server = uvicorn_server(service, cfg, log_level="warning", close_service=False)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    t_end = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < t_end, "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    live = Live(f"http://127.0.0.1:{port}", server, thread)
    try:
        yield live
    finally:
        if thread.is_alive():
            live.stop()


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, data) of an SSE body; comments (keep-alives) skipped."""
    out = []
    for block in text.split("\n\n"):
        lines = [ln for ln in block.splitlines() if ln and not ln.startswith(":")]
        if not lines:
            continue
        fields = dict(ln.split(": ", 1) for ln in lines)
        out.append((fields["event"], json.loads(fields["data"])))
    return out
