"""Hostile or broken SPARQL endpoints: endless, huge, trickling, garbage and rejecting."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgreason.eval.runner import classify_error
from kgreason.kg.sparql.client import (
    RetryPolicy,
    SparqlBadResponseError,
    SparqlClient,
    SparqlRejectedError,
    SparqlTimeoutError,
    SparqlTooLargeError,
)
from kgreason.pog.pipeline import error_kind
from tests.security.fault_sparql import FaultSparqlServer

MiB = 1024 * 1024


class NoSleep:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, s: float) -> None:
        self.calls.append(s)


@pytest.fixture
def server() -> Iterator[FaultSparqlServer]:
    s = FaultSparqlServer().start()
    try:
        yield s
    finally:
        s.close()


def client(url: str, **kw) -> SparqlClient:
    return SparqlClient(
        url, retry=RetryPolicy(max_retries=2), sleep=NoSleep(), **{"timeout_s": 20.0, **kw}
    )


async def test_ok(server):
    c = client(server.base + "/ok")
    assert [r["x"].value for r in (await c.select("SELECT * {}")).rows] == ["http://e/a"]
    await c.aclose()


async def test_endless_body_stops_at_the_cap(server):
    c = client(server.base + "/endless", max_reply_bytes=4 * MiB)
    with pytest.raises(SparqlTooLargeError, match=r"4 MiB cap \(kg.max_reply_bytes\)") as e:
        await c.select("SELECT * {}")
    await c.aclose()
    assert server.base in str(e.value)
    assert error_kind(e.value) == classify_error(e.value) == "sparql-too-large"
    server.close()
    assert server.hits["/endless"] == 1  # not retried
    assert server.sent[0] < 64 * MiB  # the client hung up near the cap


async def test_declared_huge_body_is_refused_before_reading(server):
    c = client(server.base + "/declared", max_reply_bytes=4 * MiB)
    with pytest.raises(SparqlTooLargeError, match="Content-Length 314,572,800"):
        await c.select("SELECT * {}")
    await c.aclose()


async def test_trickle_hits_the_total_deadline_and_is_not_retried(server):
    c = client(server.base + "/trickle", timeout_s=0.5)
    with pytest.raises(SparqlTimeoutError, match=r"still arriving after 0\.5 s") as e:
        await c.select("SELECT * {}")
    await c.aclose()
    assert error_kind(e.value) == classify_error(e.value) == "sparql-timeout"
    server.close()
    assert server.hits["/trickle"] == 1
    assert server.sent[0] < 60  # of ~100 bytes: the client gave up on the body


async def test_garbage_is_a_bad_reply(server):
    c = client(server.base + "/garbage")
    with pytest.raises(SparqlBadResponseError) as e:
        await c.select("SELECT * {}")
    await c.aclose()
    assert error_kind(e.value) == "sparql-bad-reply"


async def test_400_is_rejected_not_retried(server):
    c = client(server.base + "/bad400")
    with pytest.raises(SparqlRejectedError, match="HTTP 400") as e:
        await c.select("SELECT * {}")
    await c.aclose()
    assert error_kind(e.value) == classify_error(e.value) == "sparql-rejected"
    assert server.hits["/bad400"] == 1
