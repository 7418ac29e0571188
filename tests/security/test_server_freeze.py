"""One request must never freeze the server, and the deadline holds.

The attacks (written before the defences), on a real server on loopback:
- `{"program": "x" + "\\n" * 30000}` (60 KB) stalled /healthz for 9.2 s, and its 504 came at
  17.9 s with a 10 s deadline: `detect_format`'s `re.M` search is quadratic in newlines and
  Python's regex engine holds the GIL, so the worker thread blocked the event loop;
- `"formulas(a)." * 7000` with `solver: "prover9"` did the same (a lazy `.*?`);
- a handler that keeps its worker thread busy must not delay the 504 or /healthz.

Each parser's growth is checked on its own (a ratio, tests/security/linear.py) in
test_server_parsers_*.py; here the whole server is driven with the largest payloads the
request models accept. The bounds below are the server's own deadline, not performance
figures (bench/server_freeze.py measures /healthz latency under these payloads).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kgreason.server.service import Limits, Service
from tests.security.payloads import payloads
from tests.server.conftest import warm  # noqa: F401  (the session's warm service)
from tests.server.live import Live, live_server

DEADLINE = 5.0
#: how long the test waits for anything before failing (the server must answer far sooner)
PATIENCE = 60.0


class Poller:
    """Asks /healthz over and over on its own connection, recording each latency."""

    def __init__(self, url: str) -> None:
        self.url, self.latencies, self.errors = url, [], []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=PATIENCE) as c:
            while not self._stop.is_set():
                t0 = time.perf_counter()
                try:
                    ok = c.get("/healthz").status_code == 200
                except httpx.HTTPError as e:
                    self.errors.append(repr(e))
                    continue
                self.latencies.append(time.perf_counter() - t0)
                if not ok:
                    self.errors.append("healthz not 200")
                time.sleep(0.005)

    def __enter__(self) -> Poller:
        self.thread.start()
        t_end = time.monotonic() + PATIENCE  # one answer at rest first: a reply then counts
        while not self.latencies and not self.errors and time.monotonic() < t_end:
            time.sleep(0.005)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.thread.join(PATIENCE)


@pytest.fixture(scope="module")
def live(warm: Service) -> Iterator[Live]:  # noqa: F811
    svc = Service(
        warm.kg, warm.pog, warm.lkg, llm_free=True, pog_free=warm.pog_free,
        limits=Limits(max_concurrency=4, deadline_s=DEADLINE),
    )  # fmt: skip
    with live_server(svc) as srv:
        yield srv


@pytest.mark.parametrize("body", payloads(), ids=lambda b: repr(b["program"][:14]))
def test_freeze_payload_ends_by_its_deadline_and_healthz_answers(live: Live, body) -> None:
    with Poller(live.url) as poll, live.client(timeout=PATIENCE) as c:
        t0 = time.perf_counter()
        r = c.post("/v1/solve", json=body)
        took = time.perf_counter() - t0
    assert r.status_code in (200, 400, 504), r.text[:300]
    assert r.headers["content-type"].startswith("application/json")
    assert took <= DEADLINE + 1.0, f"the reply took {took:.1f} s (deadline {DEADLINE:g} s)"
    assert not poll.errors
    assert poll.latencies and max(poll.latencies) < DEADLINE, max(poll.latencies)


class SpinningLKG:
    """A solver layer that misbehaves: it keeps its worker thread busy in Python until
    released (or for PATIENCE seconds), as a runaway parser would."""

    def __init__(self) -> None:
        self.spinning = threading.Event()
        self.release = threading.Event()

    def run_program(self, program: str, fmt: str | None = None, **kw: Any) -> dict[str, Any]:
        self.spinning.set()
        t_end = time.monotonic() + PATIENCE
        n = 0
        while not self.release.is_set() and time.monotonic() < t_end:
            n += sum(range(1000))
        return {"status": "ok", "spun": n}


def test_the_deadline_holds_while_a_handler_misbehaves(warm: Service) -> None:  # noqa: F811
    lkg = SpinningLKG()
    svc = Service(
        warm.kg, warm.pog, lkg, llm_free=True, pog_free=warm.pog_free,  # type: ignore[arg-type]
        limits=Limits(max_concurrency=2, deadline_s=1.0),
    )  # fmt: skip
    try:
        with live_server(svc) as srv, Poller(srv.url) as poll, srv.client() as c:
            t0 = time.perf_counter()
            r = c.post("/v1/solve", json={"program": "(check-sat)"})
            took = time.perf_counter() - t0
            assert lkg.spinning.is_set() and not lkg.release.is_set()
            assert r.status_code == 504 and r.json()["error_kind"] == "deadline"
            assert took <= 1.0 + 1.0, took
            assert c.get("/healthz").status_code == 200  # still answering, still spinning
            assert poll.latencies and max(poll.latencies) < 1.0
            lkg.release.set()  # before the server stops: its shutdown waits for the thread
    finally:
        lkg.release.set()
