"""Every endpoint of the real server (uvicorn on a free port), LLM-free over the bundled KG."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgreason.server.routes_site import STATIC_DIR
from kgreason.server.service import Service
from tests.server.live import Live, live_server, sse_events
from tests.server.test_runs_traversal import make_run

Q = {"question": "who directed [Once Were Warriors]"}

JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("runsdir")
    root = base / "runs"
    make_run(root / "r1", n=3)
    make_run(base / "secret")
    return root


@pytest.fixture(scope="module")
def live(warm: Service, runs_root: Path) -> Iterator[Live]:
    with live_server(warm, runs_dir=runs_root) as srv:
        yield srv


def test_ask_returns_paths_with_ids_and_timing(live: Live) -> None:
    with live.client() as c:
        r = c.post("/v1/ask", content=json.dumps(Q), headers=JSON)  # as `curl --json` sends it
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["answers"][0]["name"] == "Lee Tamahori" and out["paths"]
    assert out["mode"] == "llm-free" and "not PoG's" in out["label"]
    assert re.fullmatch(r"[0-9a-f]{32}", out["request_id"]) and out["elapsed_ms"] > 0


def test_stream_sends_stages_in_order_then_one_result(live: Live) -> None:
    with live.client() as c:
        r = c.post("/v1/ask/stream", json=Q)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = sse_events(r.text)
    kinds = [e for e, _ in events]
    assert kinds[-1] == "result" and kinds.count("result") == 1 and "error" not in kinds
    stages = [d for e, d in events if e == "stage"]
    assert stages and kinds[: len(stages)] == ["stage"] * len(stages)
    open_: list[str] = []
    for d in stages:  # every start is ended, in order, before the result
        assert set(d) == {"kind", "pipeline", "stage", "elapsed_ms", "sizes", "usage", "error"}
        if d["kind"] == "start":
            open_.append(d["stage"])
        else:
            assert open_.pop() == d["stage"] and d["elapsed_ms"] > 0
    assert not open_
    result = events[-1][1]
    assert result["answers"][0]["name"] == "Lee Tamahori" and result["request_id"]


def test_stream_refused_before_it_starts_is_a_plain_error(live: Live) -> None:
    with live.client() as c:
        r = c.post("/v1/ask/stream", json={**Q, "topics": ["Zzyzx Nothing Film"]})
    if r.status_code == 200:  # the question had started: its end is one error event
        (kind, data), *_ = reversed(sse_events(r.text))
        assert (kind, data["error_kind"]) == ("error", "unknown-entity")
    else:  # it failed before its first stage: a plain 404
        assert (r.status_code, r.json()["error_kind"]) == (404, "unknown-entity")
    with live.client() as c:
        r = c.post("/v1/ask/stream", json={**Q, "strategy": "nope"})
    assert r.status_code == 400 and r.json()["error_kind"] == "bad-request"


def test_bad_bodies_are_422_json(live: Live) -> None:
    with live.client() as c:
        for body in ("{not json", json.dumps({"question": ""}), json.dumps({"q": 1})):
            r = c.post("/v1/ask", content=body, headers=JSON)
            assert r.status_code == 422, body
            assert r.json()["error_kind"] == "bad-request" and r.json()["message"]


def test_solve_program_and_explain(live: Live) -> None:
    from tests.lkg.test_pipeline_fixtures import HORN_PROGRAM, HORN_QUESTION

    with live.client() as c:
        body = {
            "program": HORN_PROGRAM,
            "question": HORN_QUESTION,
            "options": ["A) True", "B) False"],
        }
        r = c.post("/v1/solve", json=body)
        assert r.status_code == 200 and (r.json()["route"], r.json()["answer"]) == ("horn", "B")
        r = c.post("/v1/solve", json={"context": "Cats purr.", "question": "Do cats purr?"})
        assert r.status_code == 400 and r.json()["error_kind"] == "needs-llm"
        ask = c.post("/v1/ask", json=Q).json()
        ex = c.post("/v1/explain", json=ask).json()
    assert ex["triples"] and ex["unverified"] == 0 and all(t["verified"] for t in ex["triples"])


def test_kg_search_and_entity_pages(live: Live) -> None:
    with live.client() as c:
        items = c.get("/v1/kg/search", params={"q": "Heat", "limit": 3}).json()["items"]
        assert items[0]["id"] == "Heat" and len(items) <= 3
        e = c.get("/v1/kg/entity/Once Were Warriors", params={"limit": 5}).json()
        assert e["name"] == "Once Were Warriors" and len(e["neighbours"]) == 5
        rest = c.get("/v1/kg/entity/Once Were Warriors", params={"offset": 5}).json()
        assert len(e["neighbours"]) + len(rest["neighbours"]) == e["total"]
        assert rest["next_offset"] is None
        r = c.get("/v1/kg/entity/No Such Entity 42")
        assert r.status_code == 404 and r.json()["error_kind"] == "unknown-entity"
        assert c.get("/v1/kg/search", params={"q": "x", "limit": 0}).status_code == 422


def test_runs_list_read_and_traversal(live: Live) -> None:
    with live.client() as c:
        assert [r["name"] for r in c.get("/v1/runs").json()["items"]] == ["r1"]
        run = c.get("/v1/runs/r1").json()
        assert run["total_rows"] == 3 and "evaluation report" in run["report_markdown"]
        for path in ("/v1/runs/..%2fsecret", "/v1/runs/%2e%2e/secret", "/v1/runs/r1%00"):
            r = c.get(path)
            assert r.status_code in (400, 404), path
            assert "secret" not in r.text or r.json()["error_kind"] != "ok"
            assert "results" not in r.json()
        assert c.get("/v1/runs", params={"dir": "../"}).status_code == 400
        assert c.get("/v1/runs", params={"dir": "/etc"}).status_code == 400
        assert c.get("/v1/runs/missing").status_code == 404


def test_healthz_metrics_openapi_docs_static(live: Live) -> None:
    with live.client() as c:
        c.post("/v1/ask", json=Q)
        h = c.get("/healthz").json()
        assert h["status"] == "ok" and h["mode"] == "llm-free" and "/" not in h["kg"]
        m = c.get("/metrics")
        assert m.headers["content-type"].startswith("text/plain")
        assert re.search(
            r'^kgreason_http_requests_total\{route="/v1/ask",method="POST",status="200"\} [1-9]',
            m.text, re.M,
        )  # fmt: skip
        assert 'kgreason_http_request_duration_seconds_bucket{route="/v1/ask",le="+Inf"}' in m.text
        assert "kgreason_questions_inflight 0" in m.text
        c.get("/v1/kg/entity/No Such Entity 42")
        m = c.get("/metrics").text
        assert re.search(r'^kgreason_errors_total\{kind="unknown-entity"\} [1-9]', m, re.M)
        spec = c.get("/openapi.json").json()
        assert {"/v1/ask", "/v1/ask/stream", "/v1/solve", "/v1/kg/search", "/v1/runs"} <= set(
            spec["paths"]
        )
        assert spec["paths"]["/v1/ask"]["post"]["security"] == [{"HTTPBearer": []}]
        assert "security" not in spec["paths"]["/healthz"]["get"]
        docs = c.get("/docs").text
        urls = re.findall(r'(?:src|href)="([^"]+)"', docs)
        assert urls and all(u.startswith(("/static/vendor/swagger-ui/", "data:")) for u in urls)
        assert "cdn" not in docs.lower()
        for u in urls:
            if u.startswith("/static"):
                assert c.get(u).status_code == 200, u
        root = c.get("/")
        if (STATIC_DIR / "explorer" / "index.html").is_file():
            assert root.status_code == 200 and "html" in root.headers["content-type"]
        else:
            assert root.status_code == 404 and "explorer is not installed" in root.text
        for evil in ("/static/../service.py", "/static/%2e%2e/service.py", "/static/..%2fapp.py"):
            r = c.get(evil)
            assert r.status_code == 404 and "import" not in r.text, evil
        r = c.get("/no/such/route")
        assert r.status_code == 404 and r.json()["error_kind"] == "not-found"
