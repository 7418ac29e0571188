"""The explorer never shows a previous question's evidence: in headless Chromium against the
real app (uvicorn on a thread over the session's warm LLM-free service, or a SymbolLKG with
the scripted LLM of the pipeline tests), a success then a failure in Ask and in Solve, and
every panel is cleared when a question starts and shows the error when it fails.

Screenshots go to $KGREASON_SHOTS when set (else pytest's tmp dir; run with -s for paths).
Helpers and the browser come from tests/server/browser.py (skips without Chromium)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kgreason.server.service import Service
from tests.server.browser import Page, browser
from tests.server.live import Live, live_server

__all__ = ["browser"]  # the module-scoped fixture

GOOD = "who directed [Titanic]"
BAD = "who directed [Nonexistent Film Xyz]"
#: the evidence panels of the Ask view (the answer panel is checked on its own)
ASK_PANELS = ["#topics", "#subgraph", "#funnel", "#paths", "#triples", "#usage"]
SOLVE_PANELS = ["#route", "#attempts", "#proof", "#solve-usage"]
BAD_PROGRAM = "hello world"  # no solver format: a 400 bad-program


def shots(tmp_path: Path) -> Path:
    d = Path(os.environ.get("KGREASON_SHOTS") or tmp_path)
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="module")
def live(warm: Service) -> Iterator[Live]:
    with live_server(warm) as srv:
        yield srv


@pytest.fixture(scope="module")
def lkg_live(warm: Service) -> Iterator[Live]:
    """The warm KG with a SymbolLKG whose LLM is scripted (tests/lkg fixtures): a problem
    that builds an LKG, routes, fails a first program and repairs it."""
    from kgreason.lkg.pipeline import SymbolLKG
    from kgreason.lkg.settings import LKGSettings
    from kgreason.llm.testing import ScriptedLLM
    from tests.lkg.test_pipeline_fixtures import HORN_EXTRACTION, HORN_PROGRAM, fenced, js

    llm = ScriptedLLM(
        {
            "lkg_construct": [js(HORN_EXTRACTION)],
            "route": ["PYKE"],
            "codegen": ["The answer is False."],
            "repair": [fenced(HORN_PROGRAM)],
            "*": lambda m: "[]",
        }
    )
    settings = LKGSettings(solver_timeout_s=10, max_repairs=1)
    lkg = SymbolLKG(llm, warm.pog_free.embedder, settings, prune=False)
    svc = Service(warm.kg, warm.pog, lkg, llm_free=True, pog_free=warm.pog_free)
    with live_server(svc) as srv:
        yield srv


def _texts(pg: Page, selectors: list[str]) -> dict[str, str]:
    return {s: pg.text(s) for s in selectors}


def _ask_fails(pg: Page, question: str) -> None:
    pg.page.fill("#question", question)
    pg.page.click("#ask-btn")
    pg.page.wait_for_selector("#answer .error", timeout=60_000)
    pg.page.wait_for_function("!document.getElementById('ask-btn').disabled", timeout=30_000)


def test_a_failed_question_clears_every_ask_panel(browser: Any, live: Live, tmp_path: Path) -> None:
    pg = Page(browser, live.url)
    result = pg.ask(GOOD)
    assert result["paths"] and result["answers"], result.get("error")
    before = _texts(pg, ASK_PANELS)
    assert "Titanic" in before["#topics"] and "Titanic" in before["#paths"]
    assert (
        "Titanic" in before["#triples"]
        and f"{result['subgraph']['triples']:,}" in before["#subgraph"]
    )
    assert pg.page.locator("#funnel svg").count() == 1
    assert pg.counts()[0] > 0
    assert "James Cameron" in pg.text("#answer")
    pg.shot(shots(tmp_path) / "ask-1-success.png")

    _ask_fails(pg, BAD)
    err = pg.text("#answer .error")
    assert err.startswith("unknown-entity: ") and "Nonexistent Film Xyz" in err
    # nothing of Titanic's anywhere in the Ask view: every panel says the question failed
    view = pg.text("#ask-view .cols")
    for stale in ("Titanic", "James Cameron", "Jean Negulesco", "directed_by", "confidence"):
        assert stale not in view, f"{stale!r} still shown after a failed question"
    for sel, text in _texts(pg, ASK_PANELS).items():
        assert "no result: the question failed (unknown-entity)" in text, (sel, text)
    assert pg.page.locator("#funnel svg").count() == 0
    assert pg.counts() == (0, 0)  # the graph too
    assert pg.page.locator("#answer-text, #others, #answer-confidence").count() == 0
    assert pg.text("#answer-title") == "Answer"  # no mode badge of the last reply
    assert pg.js("window.kgExplorer.lastResult") is None
    # the stages are this question's: its one stage, no total of the last one
    assert pg.page.locator("#stages tr.total").count() == 0
    assert "no result" in pg.text("#graph-hint")
    pg.shot(shots(tmp_path) / "ask-2-failure.png")

    # and a success after the failure draws everything again
    again = pg.ask(GOOD)
    assert again["paths"] and "Titanic" in pg.text("#paths") and pg.counts()[0] > 0
    assert not [e for e in pg.errors if "400" not in e], pg.errors


def test_the_panels_are_cleared_as_soon_as_a_question_starts(browser: Any, live: Live) -> None:
    """The next question's stream never answers (held by a fetch that never resolves): the
    last question's evidence is gone while it runs, not only when it ends."""
    pg = Page(browser, live.url)
    pg.ask(GOOD)
    pg.js(
        """(() => { const f = window.fetch;
          window.fetch = (url, opts) => String(url).includes('/v1/ask') ? new Promise(() => {}) : f(url, opts);
        })()"""
    )
    pg.page.fill("#question", "who directed [Avatar]")
    pg.page.click("#ask-btn")
    pg.page.wait_for_selector("#ask-stop:not([hidden])")
    view = pg.text("#ask-view .cols")
    assert "Titanic" not in view and "James Cameron" not in view
    for sel, text in _texts(pg, ASK_PANELS).items():
        assert "working…" in text, (sel, text)
    assert pg.text("#answer") == "working…"
    assert pg.counts() == (0, 0)
    assert pg.js("window.kgExplorer.lastResult") is None
    assert not pg.errors, pg.errors


def _solve(pg: Page) -> dict[str, Any]:
    pg.js("window.kgExplorer.lastSolve = null")
    pg.page.click("#solve-btn")
    pg.page.wait_for_function("!document.getElementById('solve-btn').disabled", timeout=60_000)
    res = pg.js("window.kgExplorer.lastSolve")
    return dict(res) if res else {}


def _solve_fails(pg: Page, kind: str) -> None:
    pg.page.click("#solve-btn")
    pg.page.wait_for_selector("#verdict .error", timeout=60_000)
    pg.page.wait_for_function("!document.getElementById('solve-btn').disabled", timeout=30_000)
    assert pg.text("#verdict .error").startswith(f"{kind}: ")
    assert pg.js("window.kgExplorer.lastSolve") is None
    for sel, text in _texts(pg, SOLVE_PANELS).items():
        assert f"no result: the problem failed ({kind})" in text, (sel, text)
    assert pg.page.locator("#verdict-text, #proof-text").count() == 0
    assert pg.js("window.kgExplorer.lkg") is None
    assert pg.page.locator("#lkg canvas").count() == 0


def test_a_failed_program_clears_every_solve_panel(
    browser: Any, live: Live, tmp_path: Path
) -> None:
    pg = Page(browser, live.url)
    pg.page.click("#tab-solve")
    pg.page.check("input[name=solve-mode][value=program]")
    program = pg.page.input_value("#solve-text")
    res = _solve(pg)  # the default program: Prover9 proves animal(tom)
    if res.get("status") != "ok" and res.get("error_kind") in ("solver_missing", "unavailable"):
        pytest.skip(f"Prover9 is not usable here: {res.get('error')}")
    assert res["verdict"] == "True", res
    assert "prover9" in pg.text("#route") and "$F" in pg.text("#proof")
    assert pg.text("#verdict-text") == "True"

    pg.page.fill("#solve-text", BAD_PROGRAM)
    _solve_fails(pg, "bad-program")
    view = pg.text("#solve-view .cols")
    for stale in ("prover9 (format", "$F", "answer True", "status ok"):
        assert stale not in view, f"{stale!r} still shown after a failed program"
    pg.shot(shots(tmp_path) / "solve-program-2-failure.png")

    # a problem with no LLM on the server: needs-llm, the same clearing
    pg.page.fill("#solve-text", program)
    assert _solve(pg)["verdict"] == "True"  # the proof again, first
    assert "$F" in pg.text("#proof")
    pg.page.check("input[name=solve-mode][value=problem]")
    pg.page.fill("#solve-context", "All cats are animals. Tom is a cat.")
    pg.page.fill("#solve-question", "Is Tom an animal?")
    _solve_fails(pg, "needs-llm")
    assert "$F" not in pg.text("#solve-view .cols")
    assert not [e for e in pg.errors if "400" not in e], pg.errors


def test_a_failed_problem_after_a_solved_one_clears_the_lkg_too(
    browser: Any, lkg_live: Live, tmp_path: Path
) -> None:
    from tests.lkg.test_pipeline_fixtures import HORN_CONTEXT, HORN_OPTIONS, HORN_QUESTION

    pg = Page(browser, lkg_live.url)
    pg.page.click("#tab-solve")
    pg.page.fill("#solve-context", HORN_CONTEXT)
    pg.page.fill("#solve-question", HORN_QUESTION)
    pg.page.fill("#solve-options", "\n".join(HORN_OPTIONS))
    res = _solve(pg)
    assert res.get("status") == "solved", res.get("error")
    assert pg.js("window.kgExplorer.lkg.nodes().length") > 0
    assert pg.page.locator("#attempts > li").count() == 2
    assert "lkg_construct" in pg.text("#solve-usage")
    pg.shot(shots(tmp_path) / "solve-1-success.png")

    pg.page.check("input[name=solve-mode][value=program]")
    pg.page.fill("#solve-text", BAD_PROGRAM)
    _solve_fails(pg, "bad-program")
    view = pg.text("#solve-view .cols")
    assert res["route"]["route"] not in view and "lkg_construct" not in view
    assert "nodes ·" not in pg.text("#lkg-size")
    pg.shot(shots(tmp_path) / "solve-2-failure.png")
    assert not [e for e in pg.errors if "400" not in e], pg.errors
