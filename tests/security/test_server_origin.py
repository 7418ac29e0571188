"""A web page on another local port must not make a token-less server do work, and the
request head is capped at what the docs say.

The attacks (written before the defences), on a real server on loopback:
- a no-preflight `text/plain` POST to /v1/solve or /v1/ask with `Origin:
  http://localhost:9999` (or `http://127.0.0.1:3000`, `https://localhost`,
  `http://127.0.0.2`) ran: any loopback Origin counted as same-site, so any local web page
  could make the server run programs and questions;
- a request head of about 100 KiB was accepted, while the docs say heads are capped at 64 KiB.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from kgreason.server.service import Service
from tests.server.conftest import warm  # noqa: F401  (the session's warm service)
from tests.server.live import Live, live_server

PROGRAM = {"program": "(declare-const p Bool)\n(assert p)\n(check-sat)\n"}
QUESTION = {"question": "who directed [Once Were Warriors]"}
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def live(warm: Service) -> Iterator[Live]:  # noqa: F811
    with live_server(warm) as srv:
        yield srv


@pytest.fixture(scope="module")
def live_token(warm: Service) -> Iterator[Live]:  # noqa: F811
    with live_server(warm, token="s3cret") as srv:
        yield srv


def port(srv: Live) -> int:
    return int(srv.url.rsplit(":", 1)[1])


def other_origins(p: int) -> list[str]:
    return [
        "http://localhost:9999",
        "http://127.0.0.1:3000",
        f"https://localhost:{p}",
        f"https://127.0.0.1:{p}",
        f"http://127.0.0.2:{p}",
        f"http://localhost:{p}",  # the page's origin is not the Host the request names
        f"http://[::1]:{p}",
        "null",
        "http://evil.example",
    ]


@pytest.mark.parametrize("path, body", [("/v1/solve", PROGRAM), ("/v1/ask", QUESTION)])
@pytest.mark.parametrize("ctype", ["text/plain", "application/json"])
def test_post_from_another_local_origin_is_refused(live: Live, path, body, ctype) -> None:
    import json

    with live.client() as c:
        for origin in other_origins(port(live)):
            r = c.post(
                path,
                content=json.dumps(body),
                headers={"Content-Type": ctype, "Origin": origin},
            )
            assert r.status_code == 403, (origin, ctype, r.status_code, r.text[:200])
            assert r.json()["error_kind"] == "cross-origin"


def test_post_from_the_servers_own_origin_runs(live: Live) -> None:
    with live.client() as c:
        r = c.post("/v1/solve", json=PROGRAM, headers={"Origin": live.url})
        assert r.status_code == 200, r.text[:300]
        r = c.post("/v1/ask", json=QUESTION, headers={"Origin": live.url})
        assert r.status_code == 200


@pytest.mark.parametrize(
    "ctype",
    [
        None,
        "text/plain",
        "text/plain; charset=utf-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonp",
        "text/json",
    ],
)
def test_post_without_a_json_content_type_is_refused_without_a_token(live: Live, ctype) -> None:
    """A browser sends these cross-origin with no preflight, and may omit Origin."""
    import json

    headers = {} if ctype is None else {"Content-Type": ctype}
    with live.client() as c:
        req = c.build_request("POST", "/v1/solve", content=json.dumps(PROGRAM), headers=headers)
        if ctype is None:
            req.headers.pop("Content-Type", None)
        r = c.send(req)
    assert r.status_code == 415, (ctype, r.status_code, r.text[:200])
    assert r.json()["error_kind"] == "unsupported-media-type"
    assert "application/json" in r.json()["message"]


@pytest.mark.parametrize("ctype", ["application/json", "application/json; charset=utf-8"])
def test_json_posts_with_no_origin_run(live: Live, ctype) -> None:
    import json

    with live.client() as c:
        r = c.post("/v1/solve", content=json.dumps(PROGRAM), headers={"Content-Type": ctype})
    assert r.status_code == 200, r.text[:300]


def test_with_a_token_the_token_protects(live_token: Live) -> None:
    """A browser cannot attach the token to a cross-origin request without a preflight the
    server never grants, so with a token any body type is read as JSON (curl -d works)."""
    import json

    auth = {"Authorization": "Bearer s3cret"}
    with live_token.client() as c:
        r = c.post(
            "/v1/solve", content=json.dumps(PROGRAM), headers={"Content-Type": "text/plain"} | auth
        )
        assert r.status_code == 200, r.text[:300]
        r = c.post("/v1/solve", json=PROGRAM, headers={"Origin": "http://localhost:9999"})
        assert r.status_code in (401, 403)


def test_gets_from_another_site_are_still_refused(live: Live) -> None:
    with live.client() as c:
        r = c.get(
            "/v1/kg/search", params={"q": "Titanic"}, headers={"Origin": "http://evil.example"}
        )
        assert r.status_code == 403
        assert c.get("/v1/kg/search", params={"q": "Titanic"}).status_code == 200


def _head_reply(srv: Live, head_bytes: int, chunk: int = 0) -> bytes:
    host, p = srv.url.removeprefix("http://").rsplit(":", 1)
    filler = "".join(f"X-Pad-{i}: {'a' * 1000}\r\n" for i in range(head_bytes // 1012))
    req = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n{filler}Connection: close\r\n\r\n"
    with socket.create_connection((host, int(p)), timeout=20) as s:
        data = req.encode()
        if not chunk:
            s.sendall(data)  # all at once: the whole head can arrive in one read
        for i in range(0, len(data) if chunk else 0, chunk or 1):
            try:
                s.sendall(data[i : i + chunk])
            except (BrokenPipeError, ConnectionResetError):
                break
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except ConnectionResetError:
            pass
    return out


@pytest.mark.parametrize("size", [70 * 1024, 100 * 1024, 127 * 1024, 200 * 1024])
def test_a_head_over_64_kib_is_refused(live: Live, size) -> None:
    reply = _head_reply(live, size)
    assert not reply.startswith(b"HTTP/1.1 200"), size
    assert reply == b"" or reply.startswith(b"HTTP/1.1 431"), reply[:100]


def test_a_head_sent_in_pieces_is_capped_too(live: Live) -> None:
    reply = _head_reply(live, 70 * 1024, chunk=997)
    assert reply == b"" or reply.startswith(b"HTTP/1.1 431"), reply[:100]


def test_a_head_under_64_kib_is_answered(live: Live) -> None:
    assert _head_reply(live, 60 * 1024).startswith(b"HTTP/1.1 200")
    assert _head_reply(live, 60 * 1024, chunk=997).startswith(b"HTTP/1.1 200")
