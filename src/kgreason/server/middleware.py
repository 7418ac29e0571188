"""Pure ASGI middleware: metrics (outermost, so refusals are counted), the bearer token,
and the request body limit. Pure ASGI rather than Starlette's BaseHTTPMiddleware, which
buffers streaming responses and would hold back the SSE stage events."""

from __future__ import annotations

import asyncio
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


#: methods that change nothing: a cross-site page may send them, but cannot read the reply
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _origin_parts(origin: str) -> tuple[str, str, int] | None:
    """`scheme://host[:port]` -> (scheme, host, port), the port defaulted by scheme; None
    for anything else."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in ("http", "https") or any(c in rest for c in "/@?#"):
        return None
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        if tail and not tail.startswith(":"):
            return None
        port_text = tail[1:]
    else:
        host, _, port_text = rest.partition(":")
    if port_text and not port_text.isdigit():
        return None
    port = int(port_text) if port_text else (443 if scheme == "https" else 80)
    return scheme, host, port


def _media_type(value: str | None) -> str:
    return (value or "").split(";", 1)[0].strip().lower()


class LocalOnlyMiddleware:
    """For a server bound to loopback (see docs/server.md, "Browsers"):
    - a request whose Host is not a loopback name is a DNS rebinding attempt (a web page
      whose domain now resolves to 127.0.0.1): 403 `bad-host`;
    - a request whose Origin is another site, or `null`, is a cross-site request from the
      user's browser: 403 `cross-origin`;
    - without a token, a state-changing request (any POST) must come from no Origin or the
      server's own origin (scheme, host and port: a page on another local port is another
      origin), with `Content-Type: application/json`, which a browser sends cross-origin
      only after a CORS preflight this server never grants: 403 / 415 otherwise.
    With a token the token protects: a browser cannot attach it cross-origin either.
    (Bound elsewhere, behind a proxy that may rewrite Host, a token is mandatory.)"""

    def __init__(self, app: ASGIApp, enabled: bool, token_set: bool = False):
        self.app, self.enabled, self.token_set = app, enabled, token_set

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.enabled:
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        authority = headers.get(b"host", "127.0.0.1")
        host = _hostname(authority)
        if not is_loopback(host):
            await send_error(
                send, 403, "bad-host",
                f"this server answers only to a loopback Host, not {host[:100]!r}",
            )  # fmt: skip
            return
        origin = headers.get(b"origin")
        refusal = self._refusal(scope, origin, authority, headers.get(b"content-type"))
        if refusal is not None:
            await send_error(send, *refusal)
            return
        await self.app(scope, receive, send)

    def _refusal(
        self, scope: Scope, origin: str | None, authority: str, ctype: str | None
    ) -> tuple[int, str, str] | None:
        shown = repr(origin[:100]) if origin is not None else ""
        if origin is not None:
            # "null" is what a sandboxed iframe or a file: page on any site sends
            parts = _origin_parts(origin)
            if origin.strip() == "null" or parts is None or not is_loopback(parts[1]):
                return 403, "cross-origin", f"cross-origin request from {shown} refused"
        if self.token_set or scope.get("method") in SAFE_METHODS:
            return None
        if origin is not None:
            own = _origin_parts(f"{scope.get('scheme', 'http')}://{authority}")
            if _origin_parts(origin) != own:
                return (
                    403,
                    "cross-origin",
                    (
                        f"cross-origin request from {shown} refused: without a token, this "
                        "server takes requests that change state only from its own origin"
                    ),
                )
        if _media_type(ctype) != "application/json":
            return (
                415,
                "unsupported-media-type",
                (
                    "send the body as Content-Type: application/json (curl: --json); without "
                    "a token, this server refuses the content types a web page can send "
                    "cross-origin"
                ),
            )
        return None


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
            name = getattr(scope.get("route"), "path", None) or _plain_route(scope)
            self.metrics.record_request(
                name, scope.get("method", "?"), status, time.perf_counter() - t0
            )


def _plain_route(scope: Scope) -> str:
    """The label of a request no FastAPI route matched: a plain Starlette route without
    parameters (/openapi.json) by its path, the static files as one label, anything else
    "unmatched" (unmatched paths are not labels: a client could grow the set unboundedly)."""
    path = str(scope.get("path", ""))
    if path.startswith("/static/"):
        return "/static"
    if scope.get("endpoint") is not None and not scope.get("path_params"):
        return path
    return "unmatched"


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


def as_json(scope: Scope) -> None:
    """Every API body is JSON: `curl -d '{...}'` (sent as form-urlencoded) and clients that
    send no Content-Type are read as JSON instead of failing on the media type. The scope
    is changed in place: a copy would hide the matched route from MetricsMiddleware."""
    if not scope.get("path", "").startswith("/v1/"):
        return
    headers = [(k, v) for k, v in scope.get("headers") or [] if k.lower() != b"content-type"]
    ctype = next((v for k, v in scope.get("headers") or [] if k.lower() == b"content-type"), b"")
    if b"json" not in ctype.lower():
        scope["headers"] = [*headers, (b"content-type", b"application/json")]


class BodyLimitMiddleware:
    """Reads a request body fully (at most `max_body` bytes, within `timeout_s`) before the
    app sees it, so an over-long body is refused with 413 whether it declares a
    Content-Length or is chunked, and a body trickled in slowly (slowloris) gets 408 instead
    of holding its connection; the app then gets the buffered body, and later receive()
    calls (disconnects) as usual."""

    def __init__(self, app: ASGIApp, max_body: int, timeout_s: float | None = None):
        self.app, self.max_body, self.timeout_s = app, max_body, timeout_s

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
        try:
            async with asyncio.timeout(self.timeout_s):
                chunks = await self._read(receive)
        except TimeoutError:
            await send_error(
                send, 408, "timeout",
                f"the request body did not arrive within {self.timeout_s:g} s",
                {"Connection": "close"},
            )  # fmt: skip
            return
        if chunks is None:
            return  # the client went away
        if sum(map(len, chunks)) > self.max_body:
            await self._too_large(send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        as_json(scope)
        await self.app(scope, replay, send)

    async def _read(self, receive: Receive) -> list[bytes] | None:
        """The body's chunks (stopping once over the limit), or None on a disconnect."""
        chunks, size, more = [], 0, True
        while more and size <= self.max_body:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            chunks.append(chunk)
            more = message.get("more_body", False)
        return chunks

    async def _too_large(self, send: Send) -> None:
        await send_error(
            send, 413, "too-large",
            f"the request body is over the server's limit of {self.max_body} bytes",
            {"Connection": "close"},
        )  # fmt: skip
