"""Endpoint failures: down, slow, error pages; retries with backoff (fake sleep)."""

from __future__ import annotations

import random

import httpx
import pytest
from tests.servers import free_port, stub_endpoint

from kgreason.kg.sparql import (
    RetryPolicy,
    SparqlBadResponseError,
    SparqlClient,
    SparqlHTTPError,
    SparqlKG,
    SparqlTimeoutError,
    SparqlUnavailableError,
)
from kgreason.kg.sparql.queries import select_all


class FakeSleep:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, s: float) -> None:
        self.calls.append(s)


def make_client(
    url: str, *, retries: int = 2, timeout_s: float = 5.0
) -> tuple[SparqlClient, FakeSleep]:
    sleep = FakeSleep()
    policy = RetryPolicy(max_retries=retries, base_s=0.5, max_s=3.0, rng=random.Random(7))
    return SparqlClient(url, timeout_s=timeout_s, retry=policy, sleep=sleep), sleep


def test_backoff_is_exponential_with_bounded_jitter():
    policy = RetryPolicy(base_s=0.5, max_s=3.0, rng=random.Random(1))
    delays = [policy.delay(a) for a in range(6)]
    for a, d in enumerate(delays):
        base = min(3.0, 0.5 * 2**a)
        assert base <= d <= base + 0.5
    assert delays[0] < delays[1] < delays[2]


async def test_server_down_names_the_url_after_retries():
    url = f"http://127.0.0.1:{free_port()}/sparql"
    client, sleep = make_client(url, retries=2)
    kg = SparqlKG(url, client=client)
    with pytest.raises(SparqlUnavailableError) as err:
        await kg.names(["m.0k3f7"])
    assert url in str(err.value) and err.value.endpoint == url
    assert "3 attempt" in str(err.value)
    assert len(sleep.calls) == 2 and sleep.calls[0] < sleep.calls[1]
    await kg.aclose()


async def test_slow_server_times_out_after_retries():
    with stub_endpoint(slow_s=1.0) as (base, hits):
        url = base + "/slow"
        client, sleep = make_client(url, retries=1, timeout_s=0.2)
        with pytest.raises(SparqlTimeoutError) as err:
            await client.ask("ASK {}")
        assert url in str(err.value) and "0.2 s" in str(err.value)
        assert hits["/slow"] == 2 and len(sleep.calls) == 1
        await client.aclose()


async def test_500_html_page_is_retried_then_reported():
    with stub_endpoint() as (base, hits):
        client, sleep = make_client(base + "/html500", retries=2)
        with pytest.raises(SparqlHTTPError) as err:
            await client.select("SELECT * {}")
        assert err.value.status == 500 and base in str(err.value)
        assert "Service Unavailable" in str(err.value)
        assert hits["/html500"] == 3 and len(sleep.calls) == 2
        await client.aclose()


async def test_200_html_page_is_a_clear_error_without_retry():
    with stub_endpoint() as (base, hits):
        client, sleep = make_client(base + "/html200", retries=3)
        kg = SparqlKG(base + "/html200", client=client)
        with pytest.raises(SparqlBadResponseError) as err:
            await kg.neighbors(["m.0k3f7"])
        assert "text/html instead of SPARQL JSON" in str(err.value) and base in str(err.value)
        assert hits["/html200"] == 1 and sleep.calls == []
        await client.aclose()


async def test_rejected_query_is_not_retried():
    with stub_endpoint() as (base, hits):
        client, sleep = make_client(base + "/bad400", retries=3)
        with pytest.raises(SparqlHTTPError) as err:
            await client.select("SELECT broken")
        assert err.value.status == 400 and "SP030" in str(err.value)
        assert hits["/bad400"] == 1 and sleep.calls == []
        await client.aclose()


async def test_transient_503_recovers_after_backoff():
    with stub_endpoint() as (base, hits):
        client, sleep = make_client(base + "/flaky", retries=3)
        assert await client.ask("ASK {}") is True
        assert hits["/flaky"] == 3 and len(sleep.calls) == 2
        await client.aclose()


def _paged_handler(total: int, cap: int | None, requests: list[str]):
    """A fake endpoint with `total` rows that honours LIMIT/OFFSET and, like Virtuoso's
    ResultSetMaxRows, silently cuts every answer at `cap` (saying so in a header)."""

    def handler(request: httpx.Request) -> httpx.Response:
        query = httpx.QueryParams(request.content.decode())["query"]
        requests.append(query)
        limit = int(query.split("LIMIT ")[1].split()[0])
        offset = int(query.split("OFFSET ")[1].split()[0])
        n = max(0, min(limit, total - offset))
        headers = {}
        if cap is not None and n >= cap:
            n, headers = cap, {"X-SPARQL-MaxRows": str(cap)}
        rows = [{"x": {"type": "literal", "value": str(offset + i)}} for i in range(n)]
        body = {"head": {"vars": ["x"]}, "results": {"bindings": rows}}
        return httpx.Response(200, json=body, headers=headers)

    return handler


@pytest.mark.parametrize(
    "total, page, cap", [(25, 10, None), (25, 5, None), (25, 100, 7), (14, 100, 7), (0, 3, None)]
)
async def test_paging_returns_every_row(total, page, cap):
    requests: list[str] = []
    http = httpx.AsyncClient(transport=httpx.MockTransport(_paged_handler(total, cap, requests)))
    client = SparqlClient("http://fake/sparql", http=http)
    rows, complete = await select_all(client, "SELECT ?x WHERE {}", "?x", page)
    assert [int(r["x"].value) for r in rows] == list(range(total)) and complete
    assert all("ORDER BY ?x" in q for q in requests)
    rows, complete = await select_all(client, "SELECT ?x WHERE {}", "?x", page, max_rows=3)
    if total >= 3:
        assert (
            not complete
            and len(rows) >= 3
            and len(requests) < 2 * (total // min(page, cap or page) + 1)
        )
    else:
        assert complete and rows == []
    await http.aclose()


def _unavailable(*_a, **_k):
    from tests.servers import ServerUnavailable

    raise ServerUnavailable("virtuoso-t not installed")


def _broken(*_a, **_k):
    raise RuntimeError("bulk load failed")


def test_server_fixture_fails_in_ci_and_skips_only_for_a_missing_binary(monkeypatch):
    from tests.kg.conftest import _start

    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI requires"):
        _start(_unavailable)
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        _start(_unavailable)
    with pytest.raises(pytest.fail.Exception, match="bulk load failed"):
        _start(_broken)


def test_one_kg_object_across_several_event_loops():
    """CLI code may call asyncio.run per question with one SparqlKG object."""
    import asyncio

    with stub_endpoint() as (base, hits):
        client, _ = make_client(base + "/flaky", retries=3)
        assert asyncio.run(client.ask("ASK {}")) is True
        assert asyncio.run(client.ask("ASK {}")) is True
        asyncio.run(client.aclose())
        assert hits["/flaky"] == 4
