"""Pure ASGI middleware: metrics (outermost, so refusals are counted), the bearer token,
and the request body limit. Pure ASGI rather than Starlette's BaseHTTPMiddleware, which
buffers streaming responses and would hold back the SSE stage events."""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from kgreason.server.config import is_loopback
from kgreason.server.metrics import Metrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def send_error(
    send: Send, status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> None:
    body = json.dumps({"error_kind": kind, "message": message}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def needs_token(path: str) -> bool:
    """The API and the metrics need the token; the static explorer, /docs, /openapi.json and
    /healthz do not (they hold no data; the explorer's own calls to /v1 carry the token)."""
    return path.startswith("/v1/") or path == "/v1" or path == "/metrics"


def _hostname(value: str) -> str:
    """`host`, `host:port`, `[::1]:port` or a URL's authority -> the bare host name."""
    v = value.strip().lower()
    if v.startswith("["):
        return v[1 : v.find("]")] if "]" in v else v
    return v.rsplit(":", 1)[0] if v.count(":") == 1 else v


class LocalOnlyMiddleware:
    """For a server bound to loopback: a request whose Host is not a loopback name is a DNS
    rebinding attempt (a web page whose domain now resolves to 127.0.0.1), and a request
    whose Origin is another site is a cross-site request from the user's browser; both get
    403. (Bound elsewhere, behind a proxy that may rewrite Host, the token protects.)"""

    def __init__(self, app: ASGIApp, enabled: bool):
        self.app, self.enabled = app, enabled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.enabled:
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = _hostname(headers.get(b"host", "127.0.0.1"))
        if not is_loopback(host):
            await send_error(
                send, 403, "bad-host",
                f"this server answers only to a loopback Host, not {host!r}",
            )  # fmt: skip
            return
        origin = headers.get(b"origin")
        if origin is not None and origin != "null":
            o_host = _hostname(origin.split("://", 1)[-1].split("/", 1)[0])
            if not is_loopback(o_host):
                await send_error(
                    send, 403, "cross-origin", f"cross-origin request from {origin!r} refused"
                )
                return
        await self.app(scope, receive, send)


class MetricsMiddleware:
    def __init__(self, app: ASGIApp, metrics: Metrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        t0 = time.perf_counter()

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            route = scope.get("route")
            name = getattr(route, "path", None) or _static_or_other(scope.get("path", ""))
            self.metrics.record_request(
                name, scope.get("method", "?"), status, time.perf_counter() - t0
            )


def _static_or_other(path: str) -> str:
    # unmatched paths are not labels (an attacker could grow the label set without bound)
    return "/static" if path.startswith("/static/") else "unmatched"


class TokenMiddleware:
    """`Authorization: Bearer TOKEN` on the API, compared in constant time."""

    def __init__(self, app: ASGIApp, token: str | None):
        self.app = app
        self.token = token.encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.token is None or not needs_token(scope["path"]):
            await self.app(scope, receive, send)
            return
        given = b""
        for k, v in scope.get("headers") or []:
            if k.lower() == b"authorization":
                scheme, _, cred = v.partition(b" ")
                given = cred.strip() if scheme.lower() == b"bearer" else b""
        if not hmac.compare_digest(given, self.token):
            what = "a wrong bearer token" if given else "no bearer token"
            await send_error(
                send, 401, "unauthorized", f"this server needs a token; the request had {what}",
                {"WWW-Authenticate": 'Bearer realm="kgreason"'},
            )  # fmt: skip
            return
        await self.app(scope, receive, send)


def as_json(scope: Scope) -> Scope:
    """Every API body is JSON: `curl -d '{...}'` (sent as form-urlencoded) and clients that
    send no Content-Type are read as JSON instead of failing on the media type."""
    if not scope.get("path", "").startswith("/v1/"):
        return scope
    headers = [(k, v) for k, v in scope.get("headers") or [] if k.lower() != b"content-type"]
    ctype = next((v for k, v in scope.get("headers") or [] if k.lower() == b"content-type"), b"")
    if b"json" in ctype.lower():
        return scope
    return {**scope, "headers": [*headers, (b"content-type", b"application/json")]}


class BodyLimitMiddleware:
    """Reads a request body fully (at most `max_body` bytes) before the app sees it, so an
    over-long body is refused with 413 whether it declares a Content-Length or is chunked;
    the app then gets the buffered body, and later receive() calls (disconnects) as usual."""

    def __init__(self, app: ASGIApp, max_body: int):
        self.app, self.max_body = app, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = None
        for k, v in scope.get("headers") or []:
            if k.lower() == b"content-length":
                try:
                    declared = int(v)
                except ValueError:
                    await send_error(send, 400, "bad-request", "invalid Content-Length")
                    return
        if declared is not None and declared > self.max_body:
            await self._too_large(send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await self._too_large(send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(as_json(scope), replay, send)

    async def _too_large(self, send: Send) -> None:
        await send_error(
            send, 413, "too-large",
            f"the request body is over the server's limit of {self.max_body} bytes",
            {"Connection": "close"},
        )  # fmt: skip
