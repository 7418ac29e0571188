"""Metrics must not grow on attacker input: every label comes from a closed set.

The attack (written before the defence): the request counter was labelled by the HTTP
method the client sent, and /healthz needs no token, so 2,000 requests like
`M00001X /healthz` grew /metrics from 329 to 2,329 series. Here 10,000 requests with random
methods and random paths go through the app, in process; a few hundred more go through the
real HTTP parser (uvicorn's h11) on a live server; and free-form labels (error kinds, LLM
stages) that reach the metrics from results are bounded too.
"""

from __future__ import annotations

import asyncio
import random
import re
import socket
import string
from collections.abc import Iterator

import httpx
import pytest

from kgreason.server import routes_kg, routes_questions, routes_runs, routes_site
from kgreason.server.app import create_app
from kgreason.server.config import ServerConfig
from kgreason.server.metrics import MAX_LABEL_VALUES, METHODS, Metrics
from kgreason.server.service import Service
from tests.server.conftest import warm  # noqa: F401  (the session's warm service)
from tests.server.live import Live, live_server

SERIES = re.compile(r"^(kgreason_[a-z_]+)(\{[^}]*\})? ", re.M)


def series(text: str) -> set[str]:
    return {m.group(1) + (m.group(2) or "") for m in SERIES.finditer(text)}


def label_values(text: str, label: str) -> set[str]:
    return set(re.findall(rf'{label}="([^"]*)"', text))


def _random_request(rng: random.Random) -> tuple[str, str]:
    method = "".join(rng.choices(string.ascii_uppercase + string.digits, k=rng.randint(1, 12)))
    if rng.random() < 0.3:
        method = rng.choice([*METHODS, "get", "Post"])
    seg = "".join(rng.choices(string.ascii_letters + string.digits + "-_.~%", k=8))
    path = rng.choice(
        [
            f"/{seg}",
            f"/v1/{seg}",
            f"/v1/runs/{seg}/{seg}",
            f"/v1/kg/entity/{seg}",
            f"/static/{seg}.js",
            f"/healthz/{seg}",
            "/healthz",
            f"/metrics?{seg}=1",
            f"/v1/ask?x={seg}",
        ]
    )
    return method, path


async def _flood(app: object, n: int, seed: int) -> None:
    rng = random.Random(seed)
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        for _ in range(n):
            method, path = _random_request(rng)
            await c.request(method, path)


def test_random_methods_and_paths_add_no_series(warm: Service) -> None:  # noqa: F811
    app = create_app(warm, ServerConfig(token="t0ken"), close_service=False)
    asyncio.run(_flood(app, 2_000, seed=1))
    metrics: Metrics = app.state.kg.metrics
    after_2k = series(metrics.render())
    asyncio.run(_flood(app, 8_000, seed=2))
    text = metrics.render()
    assert series(text) == after_2k, sorted(series(text) - after_2k)[:10]
    assert label_values(text, "method") <= {*METHODS, "other"}
    routes = label_values(text, "route")
    templates = {"/openapi.json"} | {
        r.path  # type: ignore[attr-defined]
        for m in (routes_questions, routes_kg, routes_runs, routes_site)
        for r in m.router.routes
    }
    assert routes <= templates | {"unmatched", "/static"}, routes - templates
    assert len(after_2k) < 400  # the closed sets' product, far below one series a request


@pytest.fixture(scope="module")
def live(warm: Service) -> Iterator[Live]:  # noqa: F811
    with live_server(warm) as srv:
        yield srv


def _raw(srv: Live, method: str, path: str) -> bytes:
    host, port = srv.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        )
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


def test_methods_through_the_real_http_parser_are_one_label(live: Live) -> None:
    for i in range(300):
        _raw(live, f"M{i:05d}X", "/healthz")
    with live.client() as c:
        text = c.get("/metrics").text
    assert label_values(text, "method") <= {*METHODS, "other"}
    assert not any(v.startswith("M0") for v in label_values(text, "method"))


def test_free_form_labels_are_bounded() -> None:
    m = Metrics()
    for i in range(5_000):
        m.record_error(f"kind-{i}")
        m.record_usage({f"stage_{i}": {"calls": 1, "prompt_tokens": 1, "completion_tokens": 1}})
        m.record_request(f"/route/{i}", f"X{i}", 200 + i, 0.01)
    text = m.render()
    assert len(label_values(text, "kind")) <= MAX_LABEL_VALUES + 1
    assert len(label_values(text, "stage")) <= MAX_LABEL_VALUES + 1
    assert len(label_values(text, "route")) <= MAX_LABEL_VALUES + 1
    assert label_values(text, "method") == {"other"}
    assert len(label_values(text, "status")) <= 600 - 100 + 1
    # a value that is not a plain name never becomes a label, even while there is room
    m2 = Metrics()
    m2.record_error('x"\n{y}')
    m2.record_error("a" * 500)
    assert label_values(m2.render(), "kind") == {"other"}
