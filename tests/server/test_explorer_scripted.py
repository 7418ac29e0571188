"""The web explorer in headless Chromium against the real app with scripted LLMs (the PoG
and SymbolLKG test doubles) and with a bearer token: the app runs under uvicorn on a thread
over the session's warm LLM-free service (tests/server/conftest.py), so no subprocess has to
load the models again. Helpers and the browser come from tests/server/browser.py."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if not Path("/usr/bin/chromium").exists():
    pytest.skip("/usr/bin/chromium is missing (apt install chromium)", allow_module_level=True)
pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")

from tests.server.browser import (  # only with a browser
    QUESTION,
    Page,
    _free_port,
    browser,
)

__all__ = ["browser"]  # the module-scoped fixture, used here too


def _serve_in_thread(svc: Any, **config: Any) -> Iterator[str]:
    """The real app under uvicorn on a thread (stopped as SIGTERM does)."""
    import threading

    from kgreason.server.config import ServerConfig
    from kgreason.server.run import uvicorn_server

    port = _free_port()
    cfg = ServerConfig(port=port, **config)
    uv = uvicorn_server(svc, cfg, log_level="warning", close_service=False)
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    t_end = time.monotonic() + 30
    while not uv.started:
        assert thread.is_alive() and time.monotonic() < t_end, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    uv.should_exit = True
    thread.join(timeout=30)


@pytest.fixture(scope="module")
def pog_server(warm: Any) -> Iterator[str]:
    """The real app whose PoG's LLM is the scripted chain model of the PoG tests
    (tests/pog/scripted_chain.py): the PoG mode's stages, LLM usage and pruning funnel,
    with no LLM reachable."""
    import kgreason
    from kgreason.server.service import Service
    from tests.pog.scripted_chain import chain_llm

    llm = chain_llm(QUESTION, "Once Were Warriors", ["directed_by"])
    pog = kgreason.PoG(warm.kg, llm, warm.pog_free.embedder)
    svc = Service(warm.kg, pog, warm.lkg, llm_free=False, pog_free=warm.pog_free)
    yield from _serve_in_thread(svc)


@pytest.fixture(scope="module")
def token_server(warm: Any) -> Iterator[str]:
    """The warm LLM-free service behind a bearer token."""
    yield from _serve_in_thread(warm, token="s3cret-token")


def test_pog_mode_shows_llm_stages_usage_and_the_funnel(
    browser: Any, pog_server: str, tmp_path: Path
) -> None:
    pg = Page(browser, pog_server)
    assert not pg.js("document.getElementById('llm-free').checked")
    result = pg.ask(QUESTION)
    assert result["mode"] == "pog" and result["error_kind"] is None, result.get("error")

    title = pg.text("#answer-title")
    assert title.startswith("Answer") and "LLM-free" not in title
    assert pg.text("#answer-text") == ", ".join(a["name"] for a in result["answers"])
    # one row per pipeline stage, in the order the stream sent them, with LLM calls
    rows = pg.js(
        "[...document.querySelectorAll('#stages tbody tr[data-stage]')]"
        ".map(r => [r.dataset.stage, r.cells[2].textContent, r.className])"
    )
    stages = [r[0] for r in rows]
    assert stages == ["topic_entity", "graph", "question_analysis", "exploration", "faithfulness"]
    assert all(r[2] == "done" for r in rows)
    calls = {r[0]: int(r[1]) for r in rows}
    assert calls["question_analysis"] == result["usage"]["question_analysis"]["calls"] == 1
    assert sum(calls.values()) == result["usage"]["total"]["calls"]
    # the funnel of the exploration step that answered: candidates, then each pruning step
    step = next(t for t in result["trace"] if t.get("phase") == result["phase"] and "pruning" in t)
    label = pg.page.get_attribute("#funnel svg", "aria-label") or ""
    want = [f"candidates: {step['candidates']}"] + [
        f"{p['step']}: {p['out']}" for p in step["pruning"]
    ]
    assert label == "pruning funnel: " + ", ".join(want)
    # LLM usage per LLM stage, with the total
    usage = pg.text("#usage")
    assert "question_analysis" in usage and "precise_select" in usage and "total" in usage
    nodes, edges = pg.counts()
    assert nodes >= 2 and edges >= 1
    pg.shot(tmp_path / "explorer-pog.png")
    assert not pg.errors, pg.errors
    assert not pg.offsite(), pg.offsite()


def test_a_server_with_a_token_asks_for_it(browser: Any, token_server: str) -> None:
    pg = Page(browser, token_server)
    pg.page.fill("#question", QUESTION)
    pg.page.click("#ask-btn")
    pg.page.wait_for_selector("#token-form:not([hidden])", timeout=30_000)
    assert "token" in pg.text("#server-status")
    pg.page.fill("#token", "s3cret-token")
    pg.page.click("#token-form button")
    result = pg.ask(QUESTION)
    assert result["paths"]
    # the token went in the header of the retried request, never in a URL
    assert not any("s3cret" in u for u in pg.requests)


@pytest.fixture(scope="module")
def lkg_server(warm: Any) -> Iterator[str]:
    """The real app whose SymbolLKG has a scripted LLM (tests/lkg fixtures): the LKG of a
    ProntoQA-style text, a route, a first program the solver cannot read, then a repair."""
    from kgreason.lkg.pipeline import SymbolLKG
    from kgreason.lkg.settings import LKGSettings
    from kgreason.llm.testing import ScriptedLLM
    from kgreason.server.service import Service
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
    yield from _serve_in_thread(svc)


def test_solve_a_problem_draws_the_lkg_route_attempts_and_verdict(
    browser: Any, lkg_server: str, tmp_path: Path
) -> None:
    from tests.lkg.test_pipeline_fixtures import HORN_CONTEXT, HORN_OPTIONS, HORN_QUESTION

    pg = Page(browser, lkg_server)
    pg.page.click("#tab-solve")
    pg.page.fill("#solve-context", HORN_CONTEXT)
    pg.page.fill("#solve-question", HORN_QUESTION)
    pg.page.fill("#solve-options", "\n".join(HORN_OPTIONS))
    pg.page.click("#solve-btn")
    pg.page.wait_for_function("window.kgExplorer.lastSolve", timeout=60_000)
    res = pg.js("window.kgExplorer.lastSolve")
    assert res["status"] == "solved", res.get("error")
    assert pg.text("#verdict-text") == res["verdict"]
    assert res["route"]["route"] in pg.text("#route")
    # both attempts, the failed one with the solver's message
    attempts = pg.page.locator("#attempts > li")
    assert attempts.count() == len(res["attempts"]) == 2
    first = res["attempts"][0]
    assert first["status"] in attempts.nth(0).text_content()
    assert (first["error"] or "")[:40] in (attempts.nth(0).text_content() or "")
    assert "ok" in (attempts.nth(1).text_content() or "")
    # the retrieved LKG subgraph is drawn: one node per retrieved node
    drawn = "window.kgExplorer.lkg.nodes().filter(n => n.data('kind') !== 'outside').length"
    assert pg.js(drawn) == len(res["subgraph"]["nodes"]) > 0
    assert pg.js("window.kgExplorer.lkg.edges().length") == len(res["subgraph"]["edges"])
    kinds = set(pg.js("window.kgExplorer.lkg.nodes().map(n => n.data('kind'))"))
    assert "rule" in kinds
    assert "lkg_construct" in pg.text("#solve-usage")
    pg.shot(tmp_path / "explorer-solve-problem.png")
    assert not pg.errors, pg.errors
