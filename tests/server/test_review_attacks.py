"""Attacks on the real HTTP server beyond the other server tests (an outside review): slow
clients that hold connections (slowloris on the request head or body, an idle socket, an
SSE consumer that never reads), malformed bodies (invalid UTF-8, deep nesting, huge
numbers), encoded path traversal, the Host/Origin checks and out-of-range paging. Each was
written before its defence; the timeouts are small config values so nothing here waits long.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from kgreason.server.service import Service
from tests.server.live import Live, live_server

Q = {"question": "who directed [Once Were Warriors]"}
#: how long a test waits for the server to do what it should before failing (not a timing
#: assertion: the server's own timeouts below are 1 s)
PATIENCE = 20.0


@pytest.fixture(scope="module")
def live(warm: Service) -> Iterator[Live]:
    with live_server(warm, header_timeout_s=1.0, body_timeout_s=1.0) as srv:
        yield srv


def _connect(srv: Live) -> socket.socket:
    host, port = srv.url.removeprefix("http://").rsplit(":", 1)
    s = socket.create_connection((host, int(port)))
    s.settimeout(0.2)
    return s


def _trickle(s: socket.socket, drip: bytes) -> bytes:
    """Send `drip` every 0.2 s until the server answers or closes; what it sent ("" when it
    just closed). Fails after PATIENCE seconds of the server putting up with it."""
    t_end = time.monotonic() + PATIENCE
    while time.monotonic() < t_end:
        try:
            return s.recv(65536)
        except TimeoutError:
            pass
        except ConnectionResetError:
            return b""
        try:
            s.sendall(drip)
        except (BrokenPipeError, ConnectionResetError):
            return b""
    pytest.fail(f"the server kept a slow connection open for {PATIENCE} s")


def _read_to_close(s: socket.socket) -> bytes:
    """The rest of a reply the server ends by closing (`connection: close`)."""
    out = b""
    t_end = time.monotonic() + PATIENCE
    while time.monotonic() < t_end:
        try:
            chunk = s.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            break
        if not chunk:
            break
        out += chunk
    return out


def test_slow_request_head_is_dropped(live: Live) -> None:
    with _connect(live) as s:
        s.sendall(b"POST /v1/ask HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        _trickle(s, b"X-Slow: 1\r\n")  # a header line at a time, never the blank line
    with live.client() as c:  # and the server still answers others
        assert c.get("/healthz").status_code == 200


def test_idle_connection_that_never_sends_is_dropped(live: Live) -> None:
    with _connect(live) as s:
        t_end = time.monotonic() + PATIENCE
        while time.monotonic() < t_end:
            try:
                assert s.recv(100) == b""
                return
            except TimeoutError:
                continue
        pytest.fail("an idle connection was kept open")


def test_kept_alive_connection_outlives_the_head_deadline_between_requests(live: Live) -> None:
    """The head deadline (1 s here) runs only while a head is coming in: a connection that
    waits longer than that between two requests (under uvicorn's 5 s keep-alive) is kept."""
    get = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with _connect(live) as s:
        s.settimeout(PATIENCE)
        for _ in range(2):
            s.sendall(get)
            assert _response(s).startswith(b"HTTP/1.1 200")
            time.sleep(2.0)


def _response(s: socket.socket) -> bytes:
    """One whole response (head and its Content-Length body) off a kept-alive socket."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = s.recv(65536)
        assert chunk, f"the server closed the connection: {got[:200]!r}"
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = s.recv(65536)
        assert chunk, "the server closed the connection mid-body"
        body += chunk
    return head + b"\r\n\r\n" + body


def test_slow_body_gets_408(live: Live) -> None:
    with _connect(live) as s:
        s.sendall(
            b"POST /v1/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n{"
        )
        got = _trickle(s, b" ")
        got += _read_to_close(s)  # the head and the body may come in separate segments
    assert got.startswith(b"HTTP/1.1 408"), got[:200]
    assert b'"error_kind": "timeout"' in got


def test_sse_consumer_that_never_reads_frees_the_question(live: Live, warm: Service) -> None:
    """Streams whose client reads nothing: the questions still end (their slots are free)
    and the server keeps answering everyone else."""
    socks = []
    body = json.dumps(Q).encode()
    try:
        for _ in range(6):  # more than max_concurrency (4): slots must come back
            s = _connect(live)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            s.sendall(
                b"POST /v1/ask/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            socks.append(s)
        t_end = time.monotonic() + PATIENCE
        with live.client() as c:
            while (r := c.post("/v1/ask", json=Q)).status_code == 429:
                assert time.monotonic() < t_end, "streams nobody reads kept their slots"
                time.sleep(0.1)
            assert r.status_code == 200
        while warm.inflight and time.monotonic() < t_end:
            time.sleep(0.05)
        assert warm.inflight == 0
    finally:
        for s in socks:
            s.close()


@pytest.mark.parametrize(
    "body",
    [
        b'{"question": "\xff\xfe who directed"}',  # invalid UTF-8
        b"[" * 100_000 + b"]" * 100_000,  # nesting past the parser's recursion limit
        b'{"question": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        b'{"question": "x", "topics": [' + b"9" * 100_000 + b"]}",  # int over 4300 digits
        b'{"question": "x"',  # truncated
    ],
    ids=["utf8", "deep-array", "deep-field", "huge-int", "truncated"],
)
@pytest.mark.parametrize("path", ["/v1/ask", "/v1/explain", "/v1/solve"])
def test_malformed_json_is_a_clear_400_or_422(live: Live, path: str, body: bytes) -> None:
    with live.client() as c:
        r = c.post(path, content=body, headers={"Content-Type": "application/json"})
        assert r.status_code in (400, 422), r.text[:300]
        err = r.json()
        assert err["error_kind"] == "bad-request", err
        assert "internal" not in err["message"].lower()
        assert c.get("/healthz").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/static/../app.py",
        "/static/%2e%2e/app.py",
        "/static/..%2fapp.py",
        "/static/%2e%2e%2fapp.py",
        "/static/vendor/../../app.py",
        "/static/..%5capp.py",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/static/explorer/%00index.html",
    ],
)
def test_static_traversal_never_serves_files_outside(live: Live, path: str) -> None:
    raw = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
    with _connect(live) as s:
        s.settimeout(PATIENCE)
        s.sendall(raw)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
    status = got.split(b" ", 2)[1]
    assert status in (b"400", b"404"), got[:300]
    assert b"create_app" not in got and b"root:" not in got


@pytest.mark.parametrize(
    "name",
    ["%2e%2e/%2e%2e/etc", "..%2f..%2fetc", "%2fetc", "a/%2e%2e/%2e%2e", "x%00y", "..\\..\\etc"],
)
def test_runs_traversal_encoded(warm: Service, tmp_path, name: str) -> None:
    (tmp_path / "runs").mkdir()
    with live_server(warm, runs_dir=tmp_path / "runs") as srv, srv.client() as c:
        r = c.get(f"/v1/runs/{name}")
        assert r.status_code in (400, 404), r.text
        r = c.get("/v1/runs", params={"dir": name.replace("%2f", "/").replace("%2e", ".")})
        assert r.status_code in (400, 404), r.text


@pytest.mark.parametrize(
    "query",
    [
        "limit=1000000000",
        "limit=0",
        "limit=-5",
        "offset=-1",
        "offset=abc",
        "limit=1e3",
        "limit=99999999999999999999999999",
    ],
)
def test_kg_paging_out_of_range_is_422(live: Live, query: str) -> None:
    with live.client() as c:
        for path in ("/v1/kg/search?q=once&", "/v1/kg/entity/Lee%20Tamahori?"):
            if "offset" in query and "search" in path:
                continue
            r = c.get(path + query)
            assert r.status_code == 422, (path, query, r.text)
            assert r.json()["error_kind"] == "bad-request"


def test_kg_offset_past_the_end_is_an_empty_last_page(live: Live) -> None:
    with live.client() as c:
        r = c.get("/v1/kg/entity/Lee%20Tamahori", params={"offset": 10**30})
        assert r.status_code == 200
        assert r.json()["neighbours"] == [] and r.json()["next_offset"] is None


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1.evil.test", "localhost.evil.test", "evil.test#@127.0.0.1", "0.0.0.0", ""],
)
def test_host_that_only_looks_local_is_refused(live: Live, host: str) -> None:
    with live.client() as c:
        assert c.get("/healthz", headers={"Host": host}).status_code in (400, 403)


def test_origin_null_cross_site_post_is_refused(live: Live) -> None:
    """A sandboxed iframe on any site sends `Origin: null`; a text/plain POST needs no
    preflight, so a token-less local server must refuse it like any other foreign origin."""
    with live.client() as c:
        r = c.post(
            "/v1/ask", content=json.dumps(Q),
            headers={"Origin": "null", "Content-Type": "text/plain"},
        )  # fmt: skip
        assert r.status_code == 403 and r.json()["error_kind"] == "cross-origin"


def test_post_routes_are_labelled_in_metrics(warm: Service) -> None:
    """With a token, a POST body without a JSON content type is rewritten as JSON on its way
    in; the route it matched must still label its metrics (it was "unmatched")."""
    label = 'kgreason_http_requests_total{route="/v1/ask",method="POST",status="200"} '

    def count(text: str) -> int:
        line = next((ln for ln in text.splitlines() if ln.startswith(label)), label + "0")
        return int(line.rsplit(" ", 1)[1])

    auth = {"Authorization": "Bearer t"}
    with live_server(warm, token="t") as srv, srv.client(headers=auth) as c:
        before = count(c.get("/metrics").text)
        assert c.post("/v1/ask", content=json.dumps(Q)).status_code == 200  # no content type
        assert c.post("/v1/ask", json=Q).status_code == 200
        assert count(c.get("/metrics").text) == before + 2


def test_openapi_json_is_labelled_in_metrics(live: Live) -> None:
    with live.client() as c:
        assert c.get("/openapi.json").status_code == 200
        assert 'route="/openapi.json",method="GET",status="200"' in c.get("/metrics").text


def test_http_errors_in_the_body_are_not_internal(live: Live) -> None:
    with httpx.Client(base_url=live.url, timeout=PATIENCE) as c:
        r = c.request("PATCH", "/v1/ask", json=Q)
        assert r.status_code == 405 and r.json()["error_kind"] == "method-not-allowed"
