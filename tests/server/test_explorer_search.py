"""The explorer's "Find entity" box in a real browser (Debian's headless Chromium against
`kgreason serve`, helpers in tests/server/browser.py): suggestions from GET /v1/kg/search,
keyboard and mouse picks into the topic-entity field, "show" in the graph, XSS names as text,
stale replies dropped, one request in flight, errors in the dropdown. Skips when
/usr/bin/chromium or playwright is missing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.server.browser import EVIL, EVIL_SCRIPT, Page, _start, browser, evil_kg, tsv_kg

__all__ = ["browser"]  # the module-scoped fixture

OPTIONS = "#find-list [role=option]"


def _wait_held(pg: Page, held: list[Any]) -> None:
    """Until the page's first search request is held by the test's route (at most 2.5 s)."""
    for _ in range(50):
        if held:
            break
        pg.page.wait_for_timeout(50)
    assert len(held) == 1


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`kgreason serve` over the bundled KG, LLM-free."""
    yield from _start(tmp_path_factory.mktemp("search"))


@pytest.fixture(scope="module")
def evil_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A user KG whose entity names are HTML and script."""
    tmp = tmp_path_factory.mktemp("evil-search")
    evil_kg(tmp)
    yield from _start(tmp, tmp / "kg")


def searches(pg: Page) -> list[str]:
    """The `q` of every search request the page made, in order."""
    out = []
    for u in pg.requests:
        parsed = urlparse(u)
        if parsed.path == "/v1/kg/search":
            out.append(parse_qs(parsed.query)["q"][0])
    return out


def names(pg: Page) -> list[str]:
    return [str(t) for t in pg.page.locator(f"{OPTIONS} .find-name").all_text_contents()]


def test_typing_suggests_and_the_keyboard_picks_into_the_topic_field(
    browser: Any, server: str, tmp_path: Path
) -> None:
    pg = Page(browser, server)
    pg.page.click("details.opts summary")
    pg.page.fill("#ask-topics", "Lee Tamahori")  # already there: kept
    pg.page.click("#find")
    pg.page.keyboard.type("O")
    pg.page.wait_for_timeout(600)
    assert searches(pg) == []  # nothing for one character
    assert pg.js("document.getElementById('find-list').hidden")
    pg.page.keyboard.type("nce Were Warr", delay=20)
    pg.page.wait_for_selector(OPTIONS, timeout=30_000)
    assert "Once Were Warriors" in names(pg)
    assert 1 <= pg.page.locator(OPTIONS).count() <= 8
    assert searches(pg)[-1] == "Once Were Warr"
    assert len(searches(pg)) <= 3  # debounced, not one per key
    # ARIA: a combobox owning a listbox of options
    assert pg.page.get_attribute("#find", "role") == "combobox"
    assert pg.page.get_attribute("#find", "aria-expanded") == "true"
    assert pg.page.get_attribute("#find-list", "role") == "listbox"
    first = pg.page.locator(OPTIONS).first
    assert (first.locator(".find-kind").text_content() or "").strip()  # the match kind
    idx = names(pg).index("Once Were Warriors")
    for _ in range(idx + 1):
        pg.page.keyboard.press("ArrowDown")
    active = pg.page.get_attribute("#find", "aria-activedescendant")
    assert active and pg.page.get_attribute(f"#{active}", "aria-selected") == "true"
    pg.shot(tmp_path / "explorer-search.png")
    picked = pg.page.get_attribute(f"#{active}", "data-id")
    pg.page.keyboard.press("Enter")
    assert pg.page.input_value("#ask-topics") == f"Lee Tamahori; {picked}"
    assert pg.js("document.getElementById('find-list').hidden")
    assert pg.js("window.kgExplorer.lastResult") is None  # Enter did not submit the question
    # picking the same entity again does not list it twice; Escape closes
    pg.page.keyboard.type("Once Were Warr")
    pg.page.wait_for_selector(OPTIONS, timeout=30_000)
    pg.page.keyboard.press("Escape")
    assert pg.js("document.getElementById('find-list').hidden")
    assert pg.page.get_attribute("#find", "aria-expanded") == "false"
    pg.page.keyboard.press("ArrowDown")  # opens again
    pg.page.wait_for_selector(OPTIONS, timeout=30_000)
    pg.page.locator(OPTIONS).filter(has_text="Once Were Warriors").first.click()
    assert pg.page.input_value("#ask-topics") == f"Lee Tamahori; {picked}"
    assert pg.offsite() == [] and not pg.errors, (pg.offsite(), pg.errors)


def test_show_adds_the_entity_and_its_neighbours_to_the_graph(
    browser: Any, server: str, tmp_path: Path
) -> None:
    pg = Page(browser, server)
    pg.page.fill("#find", "Lee Tamah")
    pg.page.wait_for_selector(OPTIONS, timeout=30_000)
    pg.page.locator(OPTIONS).filter(has_text="Lee Tamahori").first.locator(".find-show").click()
    pg.page.wait_for_function(
        "window.kgExplorer.cy && window.kgExplorer.cy.nodes('.neighbour').length > 0",
        timeout=60_000,
    )
    entities = pg.js("window.kgExplorer.cy.nodes().map(n => n.data('entity'))")
    assert "Lee Tamahori" in entities and "Once Were Warriors" in entities
    assert "neighbours shown" in pg.text("#graph-hint")
    assert pg.page.input_value("#ask-topics") == ""  # "show" does not pick
    pg.shot(tmp_path / "explorer-search-show.png")
    assert pg.offsite() == [] and not pg.errors, (pg.offsite(), pg.errors)


def test_names_are_text_never_html(browser: Any, evil_server: str, tmp_path: Path) -> None:
    pg = Page(browser, evil_server)
    pg.page.fill("#find", "<img src")
    pg.page.wait_for_selector(OPTIONS, timeout=30_000)
    assert EVIL in names(pg)
    pg.page.fill("#find", "<script")
    pg.page.wait_for_function(
        f"[...document.querySelectorAll('.find-name')].some(e => e.textContent === {json.dumps(EVIL_SCRIPT)})",
        timeout=30_000,
    )
    pg.page.fill("#find", "<img src")
    pg.page.wait_for_function(
        f"[...document.querySelectorAll('.find-name')].some(e => e.textContent === {json.dumps(EVIL)})",
        timeout=30_000,
    )
    pg.page.locator(OPTIONS).filter(has_text=EVIL).first.locator(".find-show").click()
    pg.page.wait_for_function(
        "window.kgExplorer.cy && window.kgExplorer.cy.nodes('.neighbour').length > 0",
        timeout=60_000,
    )
    pg.page.fill("#find", "<img src")
    pg.page.wait_for_selector(OPTIONS, timeout=30_000)
    pg.page.keyboard.press("ArrowDown")
    pg.page.keyboard.press("Enter")
    assert EVIL in pg.page.input_value("#ask-topics")
    pg.shot(tmp_path / "explorer-search-xss.png")
    assert pg.js("document.querySelectorAll('img').length") == 0
    assert pg.js("document.querySelectorAll('body script').length") == 0
    assert pg.js("window.__pwned === undefined") and pg.dialogs == []
    assert not pg.errors, pg.errors


def test_a_stale_reply_is_dropped_and_one_request_is_in_flight(browser: Any, server: str) -> None:
    """The first search is held by the test; typing on sends nothing until it returns, its
    (fake) reply is not shown, and the latest text is searched then."""
    pg = Page(browser, server)
    held: list[Any] = []

    def route(r: Any) -> None:
        if not held:
            held.append(r)  # answered below, after more typing
        else:
            r.continue_()

    pg.page.route("**/v1/kg/search?*", route)
    pg.page.click("#find")
    pg.page.keyboard.type("Once We")
    pg.page.wait_for_function("true")
    _wait_held(pg, held)
    pg.page.keyboard.type("re Warr")
    pg.page.wait_for_timeout(700)  # well past the debounce
    assert searches(pg) == ["Once We"]  # still one in flight
    stale = {"items": [{"id": "STALE", "name": "Stale Entity", "score": 1.0, "kind": "exact"}]}
    held[0].fulfill(status=200, content_type="application/json", body=json.dumps(stale))
    pg.page.wait_for_selector(OPTIONS, timeout=30_000)
    assert searches(pg) == ["Once We", "Once Were Warr"]
    assert "Stale Entity" not in names(pg) and "Once Were Warriors" in names(pg)
    assert not pg.errors, pg.errors


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"status": 500, "body": '{"error_kind":"internal","message":"boom"}'}, "internal boom"),
        ({"status": 422, "body": "not json"}, "http-422"),
        (None, "not reachable"),
    ],
)
def test_errors_show_in_the_dropdown(
    browser: Any, server: str, answer: dict[str, Any] | None, expected: str
) -> None:
    pg = Page(browser, server)

    def route(r: Any) -> None:
        if answer is None:
            r.abort()
        else:
            r.fulfill(content_type="application/json", **answer)

    pg.page.route("**/v1/kg/search?*", route)
    pg.page.fill("#find", "Once")
    pg.page.wait_for_selector("#find-msg:not([hidden])", timeout=30_000)
    assert expected in pg.text("#find-msg") and "search failed" in pg.text("#find-msg")
    assert pg.page.locator(OPTIONS).count() == 0
    assert not [e for e in pg.errors if "Failed to load resource" not in e], pg.errors


def test_a_reply_to_a_closed_box_stays_closed(browser: Any, server: str) -> None:
    """Escape while the search is on its way: its reply does not open the dropdown again."""
    pg = Page(browser, server)
    held: list[Any] = []
    pg.page.route("**/v1/kg/search?*", lambda r: held.append(r))
    pg.page.click("#find")
    pg.page.keyboard.type("Once Were")
    _wait_held(pg, held)
    pg.page.keyboard.press("Escape")
    held[0].continue_()
    pg.page.wait_for_timeout(1500)
    assert pg.js("document.getElementById('find-list').hidden")
    assert pg.page.get_attribute("#find", "aria-expanded") == "false"
    assert not pg.errors, pg.errors


def test_a_401_asks_for_the_token(browser: Any, server: str) -> None:
    pg = Page(browser, server)
    body = '{"error_kind":"unauthorized","message":"a bearer token is required"}'
    pg.page.route(
        "**/v1/kg/search?*",
        lambda r: r.fulfill(status=401, content_type="application/json", body=body),
    )
    pg.page.fill("#find", "Once")
    pg.page.wait_for_selector("#find-msg:not([hidden])", timeout=30_000)
    assert "bearer token" in pg.text("#find-msg")
    assert pg.js("!document.getElementById('token-form').hidden")
    assert not [e for e in pg.errors if "Failed to load resource" not in e], pg.errors


TRICKY_IDS = ["Film; The Sequel", 'The "Quoted" Film', " lead", "trail ", ";", '"', "plain id"]


def test_topic_ids_holding_semicolons_and_quotes_survive_the_field(
    browser: Any, server: str
) -> None:
    """The topic field is `;`-separated: an id holding `;` or `"` is written quoted and read
    back whole, however the field is typed."""
    pg = Page(browser, server)
    mod = "import('/static/explorer/search.js')"
    back = pg.js(
        f"{mod}.then(m => ids => ids.map(i => m.splitTopics(m.formatTopic(i))))"
        f".then(f => f({json.dumps(TRICKY_IDS)}))"
    )
    assert back == [[i] for i in TRICKY_IDS]
    field = pg.js(f"{mod}.then(m => {json.dumps(TRICKY_IDS)}.reduce(m.addTopic, ''))")
    assert pg.js(f"{mod}.then(m => m.splitTopics({json.dumps(field)}))") == TRICKY_IDS
    typed = {
        'a; "b;c" ; d': ["a", "b;c", "d"],
        ' "x ""y"" z";;  ; w ': ['x "y" z', "w"],
        '"unclosed; to the end': ["unclosed; to the end"],
        '"q" junk; r': ["q", "r"],
        "": [],
    }
    for text, want in typed.items():
        assert pg.js(f"{mod}.then(m => m.splitTopics({json.dumps(text)}))") == want, text
    assert not pg.errors, pg.errors


@pytest.fixture(scope="module")
def semicolon_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A user KG whose entity ids hold `;` and `"`."""
    tmp = tmp_path_factory.mktemp("semicolon")
    kg = tsv_kg(
        tmp,
        "Film; The Sequel\tdirected_by\tJane Doe\n"
        'Film; The Sequel\tstarred_actors\tThe "Quoted" Actor\n'
        'The "Quoted" Actor\tstarred_actors\tOther Film\n'
        "Other Film\tdirected_by\tJane Doe\n",
    )
    yield from _start(tmp, kg)


def test_a_picked_id_with_a_semicolon_is_asked_about_whole(
    browser: Any, semicolon_server: str
) -> None:
    pg = Page(browser, semicolon_server)
    pg.page.click("details.opts summary")
    for query, want in (("Film; The", "Film; The Sequel"), ('The "Quo', 'The "Quoted" Actor')):
        pg.page.fill("#find", query)
        pg.page.wait_for_selector(OPTIONS, timeout=30_000)
        idx = [
            pg.page.get_attribute(f"{OPTIONS} >> nth={i}", "data-id")
            for i in range(pg.page.locator(OPTIONS).count())
        ].index(want)
        for _ in range(idx + 1):
            pg.page.keyboard.press("ArrowDown")
        pg.page.keyboard.press("Enter")
    assert pg.page.input_value("#ask-topics") == '"Film; The Sequel"; "The ""Quoted"" Actor"'
    result = pg.ask("which film links these two")
    assert [t["id"] for t in result["topic_entities"]] == ["Film; The Sequel", 'The "Quoted" Actor']
    assert all(t["method"] == "given" for t in result["topic_entities"])
    assert not pg.errors, pg.errors
