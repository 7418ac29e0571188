"""The explorer pages through what a reply shows in part, in headless Chromium against the
real app (uvicorn on a thread over the session's warm LLM-free service): a cut set reads
"N entities (first k shown)" in the path view and the graph, its "show more" fetches
GET /v1/results/{id}/sets/{k}?offset=&limit= and appends the members, the answers past the
reply's bound page in the same way, and a result the server no longer keeps says so.
Helpers and the browser come from tests/server/browser.py (skips without Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kgreason.server import results
from kgreason.server.service import Limits, Service
from tests.server.browser import Page, browser
from tests.server.live import Live, live_server

__all__ = ["browser"]  # the module-scoped fixture

#: the 443 English-language films sit on the top paths, 50 shown (tests/server/test_result_pages.py)
BIG = "which movies are in [English]"
#: 25 answers
MANY = "what films did [Steven Spielberg] direct"
EVICTED = "this result is no longer kept by the server; ask again"


@pytest.fixture(scope="module")
def live(warm: Service) -> Iterator[Live]:
    with live_server(warm) as srv:
        yield srv


@pytest.fixture(scope="module")
def forgetful(warm: Service) -> Iterator[Live]:
    """The warm KG and pipeline behind a server that keeps its last result only."""
    svc = Service(warm.kg, warm.pog, warm.lkg, llm_free=True, limits=Limits(kept_results=1))
    with live_server(svc) as srv:
        yield srv


def _page(live: Live, href: str, offset: int, limit: int, key: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{live.url}{href}?offset={offset}&limit={limit}", timeout=60)
    assert r.status_code == 200, r.text
    got: list[dict[str, Any]] = r.json()[key]
    return got


def _first_cut(result: dict[str, Any]) -> dict[str, Any]:
    sets = result["pages"]["sets"]
    assert sets, "the English films should be cut at 50"
    s: dict[str, Any] = sets[0]
    assert s["shown"] == 50 < s["total"]
    return s


def _requested(pg: Page, path: str) -> list[str]:
    return [u for u in pg.requests if u.startswith(pg.base + path)]


def test_a_cut_set_reads_its_size_and_its_members_page_in(browser: Any, live: Live) -> None:
    pg = Page(browser, live.url)
    result = pg.ask(BIG)
    s = _first_cut(result)
    rid, k, total = result["result_id"], s["k"], s["total"]
    path = pg.page.locator("#paths > li").nth(s["path"])
    assert f"{total} entities (first 50 shown)" in (path.text_content() or "")
    # the graph's node of that set says the same (collapsed: in braces)
    labels = pg.js("window.kgExplorer.cy.nodes('.set.cut').map(n => n.data('label'))")
    assert f"{{{total} entities (first 50 shown)}}" in labels

    # and the cited triples of its path, which have no pages, say how many there are
    hops = result["paths"][s["path"]]["hops"]
    cited = sum(len(h["triples"]) for h in hops)
    every = sum(h["triples_total"] or len(h["triples"]) for h in hops)
    assert cited < every
    assert f"path {s['path'] + 1}: {every} triples (first {cited} shown)" in pg.text("#triples")

    block = path.locator(f"details.set-page[data-k='{k}']")
    block.locator("summary").click()
    members = block.locator("ol.members > li")
    assert members.count() == 50
    assert [members.nth(i).get_attribute("title") for i in (0, 49)] == [
        (result["paths"][s["path"]]["hops"][s["position"] - 1]["dst"])[i] for i in (0, 49)
    ]
    # the path stays unhighlighted: the click was the list's, not the path's
    assert "on" not in (path.get_attribute("class") or "")

    button = block.locator("button.more")
    button.click()
    pg.page.wait_for_function(
        "sel => document.querySelectorAll(sel).length === 100",
        arg=f"#paths details.set-page[data-k='{k}'] ol.members > li",
        timeout=30_000,
    )
    asked = _requested(pg, f"/v1/results/{rid}/sets/{k}")
    assert asked == [f"{pg.base}/v1/results/{rid}/sets/{k}?offset=50&limit=50"]
    want = _page(live, s["href"], 50, 50, "members")
    got = [
        (members.nth(i).get_attribute("title"), members.nth(i).text_content())
        for i in range(50, 100)
    ]
    assert got == [(m["id"], m["name"]) for m in want]
    assert f"{total} entities (first 100 shown)" in (block.text_content() or "")
    assert f"{total} entities (first 100 shown)" in (path.text_content() or "")

    # on to the end: each page starts where the last one ended, then the control goes away
    while button.count():
        n = members.count()
        button.click()
        pg.page.wait_for_function(
            "([sel, n]) => document.querySelectorAll(sel).length > n",
            arg=[f"#paths details.set-page[data-k='{k}'] ol.members > li", n],
            timeout=30_000,
        )
    assert members.count() == total
    offsets = [
        u.split("offset=")[1].split("&")[0] for u in _requested(pg, f"/v1/results/{rid}/sets/{k}")
    ]
    assert offsets == [str(o) for o in range(50, total, 50)]
    ids = [members.nth(i).get_attribute("title") for i in range(total)]
    assert ids == [m["id"] for m in _page(live, s["href"], 0, 1000, "members")]
    assert f"{total} entities" in (block.text_content() or "")
    assert "shown)" not in (block.locator("summary").text_content() or "")
    assert not pg.errors, pg.errors


def test_a_cut_sets_more_node_draws_members_then_fetches_a_page(browser: Any, live: Live) -> None:
    pg = Page(browser, live.url)
    result = pg.ask(BIG)
    s = _first_cut(result)
    rid, total = result["result_id"], s["total"]
    pg.page.click("#sets-expand")
    node = "window.kgExplorer.cy.nodes('.set.cut')[0]"
    drawn = f"{node}.children().filter(n => !n.hasClass('more')).length"
    more = f"{node}.children('.more')"
    assert pg.js(drawn) == 15 and pg.js(f"{more}.data('label')") == f"+{total - 15} more"
    for want in (30, 45):  # from the 50 members the reply holds: no request
        pg.js(f"void {more}.emit('tap')")  # void: no collection sent back
        pg.page.wait_for_function(f"{drawn} === {want}", timeout=30_000)
    assert not _requested(pg, f"/v1/results/{rid}/sets/")
    pg.js(f"void {more}.emit('tap')")  # 60 > 50 held: the next page is fetched first
    pg.page.wait_for_function(f"{drawn} === 60", timeout=30_000)
    k = pg.js(f"window.kgExplorer.pages.sets.get('{s['path']}:{s['position']}').k")
    asked = _requested(pg, f"/v1/results/{rid}/sets/")
    assert asked == [f"{pg.base}/v1/results/{rid}/sets/{k}?offset=50&limit=50"]
    assert pg.js(f"{node}.data('label')") == f"{total} entities (first 100 shown)"
    assert pg.js(f"{more}.data('label')") == f"+{total - 60} more"
    assert "first 100 shown" in pg.text("#graph-hint")
    assert not pg.errors, pg.errors


def test_answers_past_the_reply_bound_page_in(
    browser: Any, live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results, "MAX_REPLY_ANSWERS", 7)
    pg = Page(browser, live.url)
    result = pg.ask(MANY)
    assert result["answers_total"] == 25 and len(result["answers"]) == 7
    assert pg.text("#answer .pager .cut") == "25 answers (first 7 shown)"
    assert pg.text("#answer-text") == ", ".join(a["name"] for a in result["answers"])
    pg.page.click("#answer button.more")
    pg.page.wait_for_function("!document.querySelector('#answer button.more')", timeout=30_000)
    rid = result["result_id"]
    assert _requested(pg, f"/v1/results/{rid}/answers") == [
        f"{pg.base}/v1/results/{rid}/answers?offset=7&limit=50"
    ]
    every = _page(live, result["pages"]["answers"], 0, 100, "answers")
    assert len(every) == 25
    assert pg.text("#answer-text") == ", ".join(a["name"] for a in every)
    assert pg.text("#answer .pager .cut") == "25 answers"
    # the candidates have no pages: their note says how many there are
    assert "50 candidates (first 7 shown)" in pg.text("#answer")
    assert not pg.errors, pg.errors


def test_a_result_the_server_no_longer_keeps_says_so(browser: Any, forgetful: Live) -> None:
    pg = Page(browser, forgetful.url)
    result = pg.ask(BIG)
    s = _first_cut(result)
    # another question: the server keeps one result, so this page's is dropped
    r = httpx.post(f"{forgetful.url}/v1/ask", json={"question": MANY}, timeout=60)
    assert r.status_code == 200 and r.json()["result_id"] != result["result_id"]
    block = pg.page.locator(f"#paths details.set-page[data-k='{s['k']}']")
    block.locator("summary").click()
    block.locator("button.more").click()
    problem = block.locator(".pager-error")
    problem.wait_for(state="visible", timeout=30_000)
    assert problem.text_content() == EVICTED
    assert problem.get_attribute("role") == "alert"
    assert block.locator("button.more").count() == 0  # asking the same again cannot help
    assert block.locator("ol.members > li").count() == 50  # what was shown stays
    # the graph's "+N more" of a set says the same once its held members run out
    pg.page.click("#sets-expand")
    more = "window.kgExplorer.cy.nodes('.set.cut')[0].children('.more')"
    for _ in range(4):  # 15, 30, 45, then the 50 held: the next would need a page
        pg.js(f"void {more}.emit('tap')")
    pg.page.wait_for_function(
        "t => document.getElementById('graph-hint').textContent === t", arg=EVICTED, timeout=30_000
    )
    # the 404s are the page's requests, not script errors
    assert not [e for e in pg.errors if "404" not in e], pg.errors
