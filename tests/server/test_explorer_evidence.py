"""How the explorer shows a result, in headless Chromium against the real app (uvicorn on a
thread over the session's warm LLM-free service, bundled MetaQA KG): each entity set and
entity drawn once, the answer's confidence, one total, the LLM-free answer apart from the
other candidates under the reply's own label, placeholders that read as hints, an 800 px
wide window, and a two-topic question drawn at a readable size.

Screenshots go to $KGREASON_SHOTS when set (else pytest's tmp dir; run with -s for paths).
Helpers and the browser come from tests/server/browser.py (skips without Chromium)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kgreason.server.service import Service
from tests.server.browser import Page, browser
from tests.server.live import Live, live_server
from tests.server.test_explorer_clears import shots

__all__ = ["browser"]  # the module-scoped fixture

TITANIC = "who directed [Titanic]"
#: two topic entities joined by paths of up to 6 hops (a wide graph)
TWO_TOPICS = "which films starred [Kate Winslet] and [Leonardo DiCaprio]"
#: the 443 English-language films are on all three top paths
BIG = "which movies are in [English]"
#: the graph's node font (graphstyle.js) times the zoom must be at least this, in CSS px
MIN_FONT_PX = 10


@pytest.fixture(scope="module")
def live(warm: Service) -> Iterator[Live]:
    with live_server(warm) as srv:
        yield srv


def _drawn_entities(pg: Page) -> list[str]:
    return list(
        pg.js(
            "window.kgExplorer.cy.nodes().filter(n => n.data('entity') !== undefined).map(n => n.data('entity'))"
        )
    )


def _ranker(result: dict[str, Any]) -> dict[str, Any]:
    return next(t for t in result["trace"] if t.get("stage") == "ranker")


def _synthetic(paths: list[list[tuple[list[str], str, list[str]]]], **extra: Any) -> dict[str, Any]:
    """A result of paths given as hops (src ids, relation, dst ids), for show()."""
    return {
        "question": "synthetic",
        "mode": "llm-free",
        "answers": [],
        "candidates": [],
        "topic_entities": [{"id": "T", "name": "T", "method": "given", "score": 1.0}],
        "paths": [
            {
                "hops": [
                    {"src": s, "relation": r, "dst": d, "forward": True, "triples": []}
                    for s, r, d in p
                ]
            }
            for p in paths
        ],
        "trace": [],
        "usage": {},
        "timings_s": {},
        "subgraph": {},
        **extra,
    }


def test_a_set_on_several_paths_is_one_node(browser: Any, live: Live) -> None:
    pg = Page(browser, live.url)
    result = pg.ask(BIG)
    ids = [tuple(sorted(p["hops"][0]["dst"])) for p in result["paths"]]
    assert len(result["paths"]) == 3 and len(set(ids)) == 1  # one set, three paths
    sets = pg.js("window.kgExplorer.cy.nodes('.set').map(n => n.data('size'))")
    assert sets.count(443) == 1, sets

    # the same set in another order on each path, and a member on a path of its own: one
    # set node, each entity once, the member's own hop ending at it
    synthetic = _synthetic(
        [
            [(["T"], "r1", ["A", "B", "C"])],
            [(["T"], "r1", ["C", "A", "B"]), (["C", "A", "B"], "r2", ["X"])],
            [(["T"], "r1", ["B", "C", "A"])],
            [(["T"], "r3", ["B"])],
        ]
    )
    pg.page.evaluate("r => window.kgExplorer.show(r)", synthetic)
    assert pg.js("window.kgExplorer.cy.nodes('.set').length") == 1
    drawn = _drawn_entities(pg)
    assert sorted(drawn) == ["A", "B", "C", "T", "X"], drawn
    r3 = pg.js(
        "window.kgExplorer.cy.edges().filter(e => e.data('label') === 'r3').map(e => e.target().data('entity'))"
    )
    assert r3 == ["B"]
    assert pg.js("window.kgExplorer.cy.edges().length") == 3  # r1 once, r2, r3
    assert not pg.errors, pg.errors


def test_an_entity_on_a_path_and_in_a_set_is_drawn_once(browser: Any, live: Live) -> None:
    """Titanic: directed_by {James Cameron, Jean Negulesco}, written_by James Cameron."""
    pg = Page(browser, live.url)
    pg.ask(TITANIC)
    drawn = _drawn_entities(pg)
    assert drawn.count("James Cameron") == 1, drawn
    written = "window.kgExplorer.cy.edges().filter(e => e.data('label') === 'written_by')"
    assert pg.js(f"{written}.map(e => e.target().data('entity'))") == ["James Cameron"]
    # collapsed, the set stands for its member: the hop is drawn to the set (a proxy edge)
    pg.page.click("#sets-collapse")
    assert pg.js(f"{written}.map(e => [e.target().hasClass('set'), e.hasClass('proxy')])") == [
        [True, True]
    ]
    pg.page.click("#sets-expand")
    assert pg.js(f"{written}.map(e => [e.target().data('entity'), e.hasClass('proxy')])") == [
        ["James Cameron", False]
    ]
    assert not pg.errors, pg.errors


def test_the_answers_confidence_is_shown(browser: Any, live: Live) -> None:
    pg = Page(browser, live.url)
    result = pg.ask(TITANIC)
    conf = _ranker(result)["confidence"]
    assert isinstance(conf, float)
    assert pg.text("#answer-confidence") == f"confidence {conf:.2f}"
    assert f"top path · confidence {conf:.2f}" in (
        pg.page.locator("#paths > li").first.text_content() or ""
    )
    assert pg.page.locator("#paths > li").nth(1).locator(".badge.top").count() == 0
    # a reply with no confidence says none
    pg.page.evaluate(
        "r => window.kgExplorer.show(r)",
        _synthetic([[(["T"], "r", ["A"])]], answers=[{"id": "A", "name": "A"}]),
    )
    assert pg.page.locator("#answer-confidence, #paths .badge.top").count() == 0


_TIME = re.compile(r"\d[\d,.]* (ms|s)\b")


def test_one_total_is_shown(browser: Any, live: Live) -> None:
    """The stages table's total (the time the server spent: elapsed_ms) is the one total:
    no running clock beside the Stages heading and no time in the status line once done."""
    pg = Page(browser, live.url)
    result = pg.ask(TITANIC)
    totals = pg.page.locator("#stages tr.total")
    assert totals.count() == 1
    shown = totals.locator("td").first.text_content() or ""
    assert _TIME.fullmatch(shown), shown
    want = result["elapsed_ms"]
    value = float(shown.split()[0].replace(",", "")) * (1000 if shown.endswith(" s") else 1)
    assert abs(value - want) <= max(0.06, want * 0.01), (shown, want)
    assert pg.text("#ask-clock") == ""
    assert not _TIME.search(pg.text("#server-status")), pg.text("#server-status")
    assert not _TIME.search(pg.text("#h-stages")), pg.text("#h-stages")
    assert not _TIME.search(pg.text("#answer")), pg.text("#answer")


def test_llm_free_answers_come_first_apart_from_the_other_candidates(
    browser: Any, live: Live
) -> None:
    pg = Page(browser, live.url)
    result = pg.ask(TITANIC)
    answers = [a["name"] for a in result["answers"]]
    assert answers == ["James Cameron", "Jean Negulesco"]
    assert pg.text("#answer-text") == ", ".join(answers)
    others = pg.page.locator("#others > li, #answer details .answer-list > li")
    listed = [others.nth(i).get_attribute("title") for i in range(others.count())]
    assert not set(listed) & {a["id"] for a in result["answers"]}
    assert listed[:3] == [c["id"] for c in result["candidates"] if c["id"] not in answers][:3]
    # the answer block comes before the other candidates' heading
    order = pg.js(
        "document.getElementById('answer-block').compareDocumentPosition(document.getElementById('others-title'))"
    )
    assert order & 4  # Node.DOCUMENT_POSITION_FOLLOWING
    assert "Other candidates" in pg.text("#others-title")
    # the mode's label is the reply's own, whatever it says
    assert result["label"] and pg.text("#mode-label") == result["label"]
    pg.page.evaluate(
        "r => window.kgExplorer.show(r)", {**result, "label": "a label from the server"}
    )
    assert pg.text("#mode-label") == "a label from the server"
    assert not pg.errors, pg.errors


def test_placeholders_read_as_hints(browser: Any, live: Live) -> None:
    pg = Page(browser, live.url)
    pg.page.click("#tab-solve")
    fields = [
        "#solve-context",
        "#solve-question",
        "#solve-options",
        "#question",
        "#find",
        "#ask-topics",
    ]
    for sel in fields:
        ph = pg.page.get_attribute(sel, "placeholder") or ""
        assert ph.startswith("e.g."), (sel, ph)
        style = pg.page.evaluate(
            """sel => { const el = document.querySelector(sel);
              const p = getComputedStyle(el, '::placeholder'), v = getComputedStyle(el);
              return [p.fontStyle, p.color, v.color]; }""",
            sel,
        )
        assert style[0] == "italic" and style[1] != style[2], (sel, style)
    # the problem fields start empty: what is there is a hint, not a value
    for sel in ("#solve-context", "#solve-question", "#solve-options"):
        assert pg.page.input_value(sel) == ""


def test_an_800px_window_fits_the_graph_and_the_funnel(
    browser: Any, live: Live, tmp_path: Path
) -> None:
    pg = Page(browser, live.url)
    pg.page.set_viewport_size({"width": 800, "height": 768})
    pg.ask(TITANIC)
    pg.page.wait_for_timeout(300)  # a resize re-fits on the next frame
    m = pg.js(
        """(() => { const cy = window.kgExplorer.cy, g = document.getElementById('graph');
          const f = document.querySelector('#funnel svg').getBoundingClientRect();
          const label = document.querySelector('#funnel .f-label');
          const scale = f.width / 300;  // the funnel's viewBox is 300 wide
          return { vw: document.documentElement.clientWidth, sw: document.documentElement.scrollWidth,
            graph: g.getBoundingClientRect().toJSON(),
            canvas: Math.max(...[...g.querySelectorAll('canvas')].map(c => c.getBoundingClientRect().right)),
            bb: cy.elements().renderedBoundingBox(), cw: cy.width(), ch: cy.height(),
            funnelH: f.height, funnelFont: parseFloat(getComputedStyle(label).fontSize) * scale }; })()"""
    )
    assert m["sw"] <= m["vw"], m  # no horizontal scroll
    assert m["graph"]["left"] >= 0 and m["graph"]["right"] <= m["vw"], m
    assert m["canvas"] <= m["vw"], m
    # the one-topic graph is whole in its box
    bb = m["bb"]
    assert bb["x1"] >= 0 and bb["y1"] >= 0 and bb["x2"] <= m["cw"] and bb["y2"] <= m["ch"], m
    assert m["funnelH"] <= 160 and m["funnelFont"] <= 14, m
    pg.page.locator("#graph").scroll_into_view_if_needed()
    pg.shot(shots(tmp_path) / "ask-800px.png")
    # and the page after a window made narrow with the result on screen
    pg2 = Page(browser, live.url)
    pg2.ask(TITANIC)
    pg2.page.set_viewport_size({"width": 800, "height": 768})
    pg2.page.wait_for_timeout(300)
    bb = pg2.js("window.kgExplorer.cy.elements().renderedBoundingBox()")
    assert bb["x1"] >= 0 and bb["x2"] <= pg2.js("window.kgExplorer.cy.width()"), bb
    assert not pg.errors and not pg2.errors, pg.errors + pg2.errors


def test_a_two_topic_graph_is_drawn_at_a_readable_size(
    browser: Any, live: Live, tmp_path: Path
) -> None:
    pg = Page(browser, live.url)
    result = pg.ask(TWO_TOPICS)
    topics = [t["id"] for t in result["topic_entities"]]
    assert topics == ["Kate Winslet", "Leonardo DiCaprio"]
    assert max(len(p["hops"]) for p in result["paths"]) >= 4  # a wide graph
    m = pg.js(
        """(() => { const cy = window.kgExplorer.cy, n = cy.nodes('.topic')[0];
          const font = parseFloat(n.style('font-size')), z = cy.zoom(), bb = n.renderedBoundingBox();
          return { font: font * z, h: bb.h, bb, w: cy.width(), ht: cy.height() }; })()"""
    )
    assert m["font"] >= MIN_FONT_PX and m["h"] >= 20, m
    # the start of the paths (the first topic) is in view; the rest a drag away, said so
    bb = m["bb"]
    assert bb["x1"] >= 0 and bb["x2"] <= m["w"] and bb["y1"] >= 0 and bb["y2"] <= m["ht"], m
    assert "drag to pan" in pg.text("#graph-hint")
    pg.shot(shots(tmp_path) / "ask-two-topics.png")
    # Fit shows it all (smaller): the user's choice
    pg.page.click("#graph-fit")
    bb = pg.js("window.kgExplorer.cy.elements().renderedBoundingBox()")
    assert bb["x1"] >= 0 and bb["x2"] <= m["w"] + 1, bb
    assert not pg.errors, pg.errors


def test_an_out_of_kg_question_says_no_confident_answer(
    browser: Any, live: Live, tmp_path: Path
) -> None:
    """Issue 37: the abstention reads as such; the best entities stay, as candidates."""
    pg = Page(browser, live.url)
    result = pg.ask("what is the capital of France")
    assert result["abstained"] is True and result["answers"] == []
    assert pg.text("#answer-text") == "no confident answer"
    assert "may not hold this answer" in pg.text("#answer-abstained")
    assert pg.page.locator("#others-title").count() == 1 and result["candidates"]
    assert pg.page.locator("#answer-confidence").count() == 0
    pg.shot(shots(tmp_path) / "ask-abstained.png")
    assert not pg.errors, pg.errors
