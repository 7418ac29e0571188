"""The server's protections against the real server: token (401), body size (413, also
chunked), concurrency (429 + Retry-After), deadline (504, one clear error) and a graceful
shutdown that lets a question in flight finish. Slow questions are held by a GatedLLM, so
nothing here depends on how fast the machine is."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest

from kgreason.server.service import Service
from tests.server.conftest import GATED_QUESTION
from tests.server.live import live_server, sse_events

Q = {"question": "who directed [Once Were Warriors]"}

JSON = {"Content-Type": "application/json"}


def in_thread(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except Exception as e:  # the test asserts on it
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


def post(srv: Any, path: str, body: dict[str, Any]) -> httpx.Response:
    with srv.client() as c:
        return c.post(path, json=body)


def wait_for(event: threading.Event, what: str, timeout: float = 30) -> None:
    assert event.wait(timeout), f"timed out waiting for {what}"


def test_token_is_required_on_the_api_when_set(warm: Service) -> None:
    token = "s3cret-token-value"
    with live_server(warm, token=token) as srv, srv.client() as c:
        r = c.post("/v1/ask", json=Q)
        assert r.status_code == 401 and r.json()["error_kind"] == "unauthorized"
        assert r.headers["www-authenticate"].startswith("Bearer")
        for bad in ("Bearer wrong", "Bearer s3cret-token-valu", "Basic czNjcmV0", token):
            assert c.post("/v1/ask", json=Q, headers={"Authorization": bad}).status_code == 401
        assert c.get("/metrics").status_code == 401
        assert c.get("/v1/kg/search", params={"q": "Heat"}).status_code == 401
        ok = c.post("/v1/ask", json=Q, headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200 and ok.json()["paths"]
        assert c.get("/healthz").status_code == 200  # liveness stays open, without data
        assert c.get("/docs").status_code == 200


def test_body_over_the_limit_is_413_with_or_without_content_length(warm: Service) -> None:
    limit = 4096
    with live_server(warm, max_body=limit) as srv, srv.client() as c:
        big = json.dumps({"question": "x" * (limit + 10)}).encode()
        r = c.post("/v1/ask", content=big, headers=JSON)
        assert r.status_code == 413 and r.json()["error_kind"] == "too-large"

        def chunks():
            for _ in range(limit // 512 + 4):
                yield b" " * 512  # JSON whitespace: only the size is wrong

        r = c.post(
            "/v1/ask", content=chunks(), headers=JSON
        )  # a generator: Transfer-Encoding: chunked
        assert r.status_code == 413
        small = json.dumps(Q).encode()
        assert (
            c.post("/v1/ask", content=iter([small[:10], small[10:]]), headers=JSON).status_code
            == 200
        )
        pad = small + b" " * (limit - len(small))
        assert c.post("/v1/ask", content=pad, headers=JSON).status_code == 200


def test_overload_is_429_with_retry_after(gated, warm: Service) -> None:
    svc, llm = gated(max_concurrency=1)
    with live_server(svc) as srv:
        first, box = in_thread(lambda: post(srv, "/v1/ask", GATED_QUESTION))
        wait_for(llm.entered, "the first question to reach its LLM call")
        with srv.client() as c:
            for path in ("/v1/ask", "/v1/ask/stream"):
                r = c.post(path, json=Q)
                assert r.status_code == 429, path
                assert r.json()["error_kind"] == "busy" and int(r.headers["retry-after"]) >= 1
            assert c.get("/healthz").json()["inflight"] == 1  # the loop is not blocked
            m = c.get("/metrics").text
            assert 'route="/v1/ask",method="POST",status="429"} 1' in m
        llm.release()
        first.join(30)
        assert box["value"].status_code == 200


def test_deadline_is_504_with_one_clear_error(gated) -> None:
    svc, llm = gated(deadline_s=0.5)
    with live_server(svc) as srv, srv.client() as c:
        r = c.post("/v1/ask", json=GATED_QUESTION)
        assert r.status_code == 504
        assert r.json() == {
            "error_kind": "deadline",
            "message": "the question did not finish within the 0.5 s deadline",
        }
        r = c.post("/v1/ask/stream", json=GATED_QUESTION)
        events = sse_events(r.text)
        assert [e for e, _ in events].count("error") == 1 and events[-1][0] == "error"
        assert events[-1][1]["error_kind"] == "deadline"
        assert "result" not in [e for e, _ in events]
        assert svc.inflight == 0
        m = c.get("/metrics").text  # one 504 and one streamed error: each counted once
        assert 'kgreason_errors_total{kind="deadline"} 2' in m.splitlines()
    llm.release()


def test_shutdown_lets_the_question_in_flight_finish(gated) -> None:
    svc, llm = gated()
    with live_server(svc) as srv:
        asking, box = in_thread(lambda: post(srv, "/v1/ask", GATED_QUESTION))
        wait_for(llm.entered, "the question to be in flight")
        srv.server.should_exit = True  # SIGTERM
        t_end = time.monotonic() + 30
        while True:  # the server stops accepting new connections...
            try:
                httpx.get(srv.url + "/healthz", timeout=2)
            except httpx.TransportError:
                break
            assert time.monotonic() < t_end, "the server kept accepting during shutdown"
            time.sleep(0.05)
        assert srv.thread.is_alive() and not box  # ...but waits for the question
        llm.release()
        asking.join(30)
        srv.thread.join(30)
        assert not srv.thread.is_alive()
    r = box["value"]
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["request_id"] and out["error_kind"] == "llm-unreadable-reply"  # the double's reply
    assert svc.inflight == 0


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::", "example.com"])
def test_non_local_bind_without_token_exits_2(host: str) -> None:
    from typer.testing import CliRunner

    from kgreason.cli import app

    r = CliRunner().invoke(app, ["serve", "--host", host], env={"KGREASON_SERVER__TOKEN": ""})
    assert r.exit_code == 2
    assert "without a token" in r.output


def test_llm_free_question_runs_off_the_loop_and_its_deadline_fires(blocking) -> None:
    svc, kg = blocking(deadline_s=0.5, max_concurrency=1)
    with live_server(svc) as srv, srv.client() as c:
        r = c.post("/v1/ask", json=Q)  # blocked in its worker thread past the deadline
        assert r.status_code == 504 and r.json()["error_kind"] == "deadline"
        assert kg.entered.is_set()
        h = c.get("/healthz").json()  # the loop answers while the thread is stuck...
        assert h["inflight"] == 1  # ...and the stuck question still holds its slot
        r = c.post("/v1/ask", json=Q)
        assert r.status_code == 429
        kg.release()
        t_end = time.monotonic() + 30
        while c.get("/healthz").json()["inflight"]:
            assert time.monotonic() < t_end, "the slot was never given back"
            time.sleep(0.02)
        svc.limits = type(svc.limits)(deadline_s=60, max_concurrency=1)
        r = c.post("/v1/ask", json=Q)
        assert r.status_code == 200 and r.json()["answers"][0]["name"] == "Lee Tamahori"
    kgreason_close(svc)


def kgreason_close(svc: Service) -> None:
    import asyncio

    asyncio.run(svc.aclose())  # the worker pool; the shared KG is the warm fixture's


def test_dns_rebinding_and_cross_site_posts_are_refused(warm: Service) -> None:
    """A web page the user visits must not drive a local, token-less server: a rebound DNS
    name (Host is the attacker's) or a cross-site POST (Origin is the attacker's) is 403."""
    with live_server(warm) as srv, srv.client() as c:
        port = srv.url.rsplit(":", 1)[1]
        r = c.post("/v1/ask", json=Q, headers={"Host": f"evil.example:{port}"})
        assert r.status_code == 403 and r.json()["error_kind"] == "bad-host"
        assert c.get("/v1/runs", headers={"Host": "rebind.attacker.test"}).status_code == 403
        r = c.post(
            "/v1/ask", content=json.dumps(Q),
            headers={"Origin": "http://evil.example", "Content-Type": "text/plain"},
        )  # fmt: skip
        assert r.status_code == 403 and r.json()["error_kind"] == "cross-origin"
        same = {"Origin": f"http://127.0.0.1:{port}"}
        assert c.post("/v1/ask", json=Q, headers=same).status_code == 200
        for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
            assert c.get("/healthz", headers={"Host": host}).status_code == 200
