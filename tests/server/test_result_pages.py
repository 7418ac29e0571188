"""Paging through what a reply shows in part: /v1/results/{id}/sets/{k} and /answers give
the rest of each set, in the order shown, each member once, and nothing else."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import kgreason
from kgreason.server import results
from kgreason.server.results import ResultPages
from kgreason.server.service import Service
from tests.server.live import Live, live_server

JSON = {"Content-Type": "application/json"}
#: a set of 443 English-language films sits on its top paths (shown: the first 50)
BIG = {"question": "which movies are in [English]"}
#: 25 answers
MANY = {"question": "what films did [Steven Spielberg] direct"}


@pytest.fixture(scope="module")
def live(warm: Service) -> Iterator[Live]:
    with live_server(warm) as srv:
        yield srv


def _ask(c: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    r = c.post("/v1/ask", content=json.dumps(body), headers=JSON)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def _walk(c: httpx.Client, href: str, key: str, limit: int) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    url: str | None = f"{href}?offset=0&limit={limit}"
    while url is not None:
        r = c.get(url)
        assert r.status_code == 200, r.text
        page = r.json()
        assert len(page[key]) <= limit
        got += page[key]
        url = page["next"]
    return got


def _full(warm: Service, question: str) -> kgreason.PoGResult:
    """The same question with every member shown (`kgreason ask --full`)."""
    base = warm.pog_free
    s = base.settings.model_copy(update={"result_members": None, "result_triples": None})
    pog = kgreason.PoG(base.kg, None, base.embedder, s, fuzzy=base.fuzzy)
    return kgreason.run_sync(pog.ask_async(question))


def test_a_cut_set_pages_through_every_member_once_in_the_order_shown(
    live: Live, warm: Service
) -> None:
    with live.client() as c:
        out = _ask(c, BIG)
        sets = out["pages"]["sets"]
        assert sets, "the English films should be cut at 50"
        full = _full(warm, BIG["question"])
        for s in sets[:2]:
            hops = out["paths"][s["path"]]["hops"]
            shown = hops[0]["src"] if s["position"] == 0 else hops[s["position"] - 1]["dst"]
            total_key = "src_total" if s["position"] == 0 else "dst_total"
            total = (hops[0] if s["position"] == 0 else hops[s["position"] - 1])[total_key]
            assert s["total"] == total and s["shown"] == len(shown) < total
            members = [m["id"] for m in _walk(c, s["href"], "members", 97)]
            assert len(members) == len(set(members)) == total
            assert members[: len(shown)] == shown  # the reply's members come first
            whole = full.paths[s["path"]].hops
            expect = whole[0].src if s["position"] == 0 else whole[s["position"] - 1].dst
            assert tuple(members) == expect  # --full's order: relevance, then id


def test_answers_past_the_reply_bound_are_paged(
    live: Live, warm: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results, "MAX_REPLY_ANSWERS", 7)
    with live.client() as c:
        out = _ask(c, MANY)
        assert len(out["answers"]) == 7 and out["answers_total"] == 25
        assert out["candidates_total"] >= 25 and len(out["candidates"]) == 7
        href = out["pages"]["answers"]
        assert href == f"/v1/results/{out['result_id']}/answers"
        got = _walk(c, href, "answers", 10)
    full = _full(warm, MANY["question"])
    assert [(a["id"], a["name"]) for a in got] == [(a.id, a.name) for a in full.answers]
    assert got[:7] == out["answers"]


def test_a_reply_within_the_bound_has_no_answers_link(live: Live) -> None:
    with live.client() as c:
        out = _ask(c, MANY)
    assert out["answers_total"] == len(out["answers"]) == 25
    assert out["pages"]["answers"] is None


def test_unknown_results_sets_and_bad_pages_are_named_errors(live: Live) -> None:
    with live.client() as c:
        out = _ask(c, BIG)
        rid = out["result_id"]
        r = c.get("/v1/results/0123abcd/sets/0")
        assert r.status_code == 404 and r.json()["error_kind"] == "unknown-result"
        r = c.get(f"/v1/results/{rid}/sets/999")
        assert r.status_code == 404 and r.json()["error_kind"] == "unknown-set"
        for bad in ("limit=0", "limit=1001", "offset=-1", "limit=x"):
            assert c.get(f"/v1/results/{rid}/sets/0?{bad}").status_code == 422, bad
        assert c.get(f"/v1/results/{'a' * 101}/answers").status_code == 422
        assert c.get("/v1/results/..%2f..%2fetc/answers").status_code in (404, 422)
        page = c.get(f"/v1/results/{rid}/sets/1?offset=100000&limit=5").json()
        assert page["members"] == [] and page["next"] is None


def test_the_oldest_results_are_dropped_and_a_worker_names_where_a_result_is() -> None:
    class R:
        answers = ()

        def member_sets(self) -> list[Any]:
            return [[("a", "b")]]

    pages = ResultPages(capacity=2, worker=1)
    first, second = pages.keep(R()), pages.keep(R())  # type: ignore[arg-type]
    assert first.startswith("w1-")
    pages.get(first)  # used: now the newest
    pages.keep(R())  # type: ignore[arg-type]
    pages.get(first)
    with pytest.raises(results.ServiceError, match="last 2 questions"):
        pages.get(second)
    with pytest.raises(results.ServiceError, match="held by worker 3"):
        pages.get("w3-" + "0" * 32)
