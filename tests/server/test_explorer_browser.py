"""The web explorer in a real browser: Debian's headless Chromium against the real
`kgreason serve` process on a free port, LLM-free over the bundled KG (helpers in
tests/server/browser.py; the XSS names in test_explorer_xss.py).

Screenshots go to pytest's tmp dir (their paths are printed; run with -s to see them).
Skips with the reason when /usr/bin/chromium or playwright is missing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.browser import QUESTION, Page, _start, browser

__all__ = ["browser"]  # the module-scoped fixture


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`kgreason serve` over the bundled KG, LLM-free."""
    yield from _start(tmp_path_factory.mktemp("serve"))


def test_ask_streams_stages_and_draws_the_paths(browser: Any, server: str, tmp_path: Path) -> None:
    pg = Page(browser, server)
    result = pg.ask(QUESTION)
    assert result["mode"] == "llm-free" and result["paths"], result.get("error")

    # the LLM-free mode is labelled with the reply's label (never as PoG's answer)
    assert "llm-free" in pg.text("#answer-title")
    assert result["label"] and pg.text("#mode-label") == result["label"]
    assert "Lee Tamahori" in pg.text("#answer")
    # stages arrived from the stream, with their time; then the sub-steps and the total
    stages = pg.text("#stages")
    assert "llm free" in stages and "total" in stages and "fuzzy" in stages
    assert pg.page.locator("ul#topics > li").first.text_content().startswith("Once Were Warriors")
    # subgraph sizes before/after reduction, as the result has them
    sub = pg.text("#subgraph")
    assert f"{result['subgraph']['triples']:,}" in sub and "after reduction" in sub
    # the funnel chart: candidates -> fuzzy -> (precise, branch need an LLM) -> shown
    label = pg.page.get_attribute("#funnel svg", "aria-label") or ""
    graph_trace = next(t for t in result["trace"] if t.get("stage") == "graph")
    assert f"candidates: {graph_trace['paths']}" in label
    assert f"fuzzy: {graph_trace['fuzzy']}" in label and f"shown: {len(result['paths'])}" in label
    assert pg.page.locator("#funnel svg rect").count() >= 2
    # cited triples, each marked
    per_path = [sum(len(h["triples"]) for h in p["hops"]) for p in result["paths"]]
    marked = pg.page.locator("#triples li.ok").count() + pg.page.locator("#triples li.bad").count()
    assert marked == sum(per_path)  # the ones past 12 per path are in a closed <details>
    assert "verified in the KG" in pg.text("#triples")

    # the paths graph: the topic entity and at least one hop edge with its relation
    nodes, edges = pg.counts()
    assert nodes >= 2 and edges >= 1
    topic = pg.js("window.kgExplorer.cy.nodes('.topic').map(n => n.data('entity'))")
    assert topic == ["Once Were Warriors"]
    relations = pg.js("window.kgExplorer.cy.edges().map(e => e.data('label'))")
    assert "directed_by" in relations
    pg.shot(tmp_path / "explorer-ask.png")

    # click an entity: its neighbours come from GET /v1/kg/entity/{id} and the graph grows
    pg.click_entity("Once Were Warriors")
    pg.page.wait_for_function(f"window.kgExplorer.cy.nodes().length > {nodes}", timeout=30_000)
    n2, e2 = pg.counts()
    assert n2 > nodes and e2 > edges
    assert "neighbours shown" in pg.text("#graph-hint")
    assert pg.js("window.kgExplorer.cy.nodes('.neighbour').length") == n2 - nodes
    pg.shot(tmp_path / "explorer-expanded.png")

    # the keyboard does the same: focus the graph, arrow to a node, Enter expands it
    pg.page.focus("#graph")
    pg.page.keyboard.press("ArrowRight")
    assert pg.text("#graph-hint").startswith(("entity", "topic entity"))
    assert pg.js("window.kgExplorer.cy.nodes(':selected').length") == 1

    # sets collapse and expand again
    sets = pg.js("window.kgExplorer.cy.nodes('.set').length")
    if sets:
        pg.page.click("#sets-collapse")
        assert pg.js("window.kgExplorer.cy.nodes('.set.collapsed').length") == sets
        collapsed = pg.counts()[0]
        pg.page.click("#sets-expand")
        assert pg.js("window.kgExplorer.cy.nodes('.set.collapsed').length") == 0
        assert pg.counts()[0] > collapsed

    assert not pg.errors, pg.errors
    assert not pg.offsite(), f"requests off the server: {pg.offsite()}"


def test_solve_runs_a_program_and_shows_the_proof(
    browser: Any, server: str, tmp_path: Path
) -> None:
    pg = Page(browser, server)
    pg.page.click("#tab-solve")
    pg.page.check("input[name=solve-mode][value=program]")
    # the default program: a Prover9 problem whose goal follows from the assumptions
    pg.page.click("#solve-btn")
    pg.page.wait_for_function("window.kgExplorer.lastSolve", timeout=60_000)
    res = pg.js("window.kgExplorer.lastSolve")
    if res.get("status") != "ok" and res.get("error_kind") in ("solver_missing", "unavailable"):
        pytest.skip(f"Prover9 is not usable here: {res.get('error')}")
    assert res["route"] == "prover9" and res["verdict"] == "True", res
    assert pg.text("#verdict-text") == "True"
    assert "prover9" in pg.text("#route")
    assert "$F" in pg.text("#proof")  # the refutation found by Prover9
    assert pg.page.locator("#attempts li").count() >= 1
    pg.shot(tmp_path / "explorer-solve.png")

    # a program the solver rejects: the attempt shows the solver's message
    pg.page.fill("#solve-text", "formulas(assumptions).\n  p(.\nend_of_list.\n")
    pg.page.select_option("#solve-solver", "prover9")
    pg.js("window.kgExplorer.lastSolve = null")
    pg.page.click("#solve-btn")
    pg.page.wait_for_function("window.kgExplorer.lastSolve", timeout=60_000)
    bad = pg.js("window.kgExplorer.lastSolve")
    assert bad["status"] != "ok"
    assert bad["error_kind"] in pg.text("#attempts") or bad["error_kind"] in pg.text("#verdict")
    assert not pg.errors, pg.errors


def test_options_are_sent_with_the_question(browser: Any, server: str) -> None:
    """Topics given in the options skip linking (like --topic): the question names none."""
    pg = Page(browser, server)
    pg.page.click(".opts summary")
    pg.page.fill("#ask-topics", "Once Were Warriors")
    pg.page.select_option("#strategy", "fuzzy")
    result = pg.ask("who directed this film")
    assert [t["id"] for t in result["topic_entities"]] == ["Once Were Warriors"]
    assert result["topic_entities"][0]["method"] == "given"
    assert result["paths"] and not pg.errors


def test_errors_are_shown_with_their_kind(browser: Any, server: str) -> None:
    pg = Page(browser, server)
    pg.page.fill("#question", "who directed [No Such Film Qzx]")
    pg.page.click("#ask-btn")
    pg.page.wait_for_selector("#answer .error", timeout=60_000)
    err = pg.text("#answer .error")
    assert err.startswith("unknown-entity: ") and "No Such Film Qzx" in err
    assert not pg.page.is_disabled("#ask-btn")  # ready for the next question
    # a request error (404 here) is the page's, not a script error
    assert not [e for e in pg.errors if "404" not in e], pg.errors


def test_the_sse_parser_survives_any_chunking(browser: Any, server: str) -> None:
    """The page's parser of POST /v1/ask/stream (api.js), fed a stream cut at every byte:
    CRLF split between chunks, a UTF-8 character split in two, comments, multi-line data,
    a record without `event:`; a last record cut off before its blank line is dropped, as
    the EventSource rules say (the page then reports a stream that ended without a result)."""
    text = (
        ": keep-alive\r\n\r\n"
        'event: stage\r\ndata: {"stage": "graph", "name": "Amélie ✓"}\r\n\r\n'
        "event: stage\ndata: line one\ndata: line two\n\n"
        "id: 7\nretry: 10\ndata:no space\n\n"
        "event: result\rdata: {}\r\r"
        "event: result\ndata: last"
    )
    ends_in_cr = "event: stage\rdata: x\r\r"  # the final CR is a whole line end
    want = [
        {"event": "stage", "data": '{"stage": "graph", "name": "Amélie ✓"}'},
        {"event": "stage", "data": "line one\nline two"},
        {"event": "message", "data": "no space"},
        {"event": "result", "data": "{}"},
    ]
    raw = list(text.encode("utf-8"))
    pg = Page(browser, server)
    for size in (len(raw), 1, 2, 3, 7):
        chunks = [raw[i : i + size] for i in range(0, len(raw), size)]
        got = pg.page.evaluate(
            """async (chunks) => {
              const { sseRecords } = await import('/static/explorer/api.js');
              const body = new ReadableStream({ start(c) {
                for (const ch of chunks) c.enqueue(new Uint8Array(ch));
                c.close();
              } });
              const out = [];
              for await (const r of sseRecords(body)) out.push(r);
              return out;
            }""",
            chunks,
        )
        assert got == want, f"chunks of {size} byte(s)"
    got = pg.page.evaluate(
        """async (text) => {
          const { sseRecords } = await import('/static/explorer/api.js');
          const body = new Blob([text]).stream();
          const out = [];
          for await (const r of sseRecords(body)) out.push(r);
          return out;
        }""",
        ends_in_cr,
    )
    assert got == [{"event": "stage", "data": "x"}]


def test_an_unverified_triple_is_marked_in_the_list_and_the_graph(
    browser: Any, server: str, tmp_path: Path
) -> None:
    """A real result whose first cited triple the KG is said not to contain (as when a
    SPARQL endpoint changed under a run): it is listed first, marked unverified, counted,
    and its hop is drawn red and dashed."""
    pg = Page(browser, server)
    result = pg.ask(QUESTION)
    bad = result["paths"][0]["hops"][0]["triples"][0]
    result["unverified_triples"] = [bad]
    pg.page.evaluate("r => window.kgExplorer.show(r)", result)
    marked = pg.page.locator("#triples li.bad")
    # listed (and counted) under every path that cites it
    times = sum(t == bad for p in result["paths"] for h in p["hops"] for t in h["triples"])
    assert marked.count() == times
    assert marked.first.text_content() == f"{bad['head']} {bad['relation']} {bad['tail']}unverified"
    assert f"; {times} unverified" in pg.text("#triples")
    assert pg.js("window.kgExplorer.cy.edges('.unverified').length") >= 1
    labels = pg.js("window.kgExplorer.cy.edges('.unverified').map(e => e.data('label'))")
    assert bad["relation"] in labels
    # the stages table shows this result's timed steps once (no live events for it)
    assert pg.page.locator("#stages tr.total").count() == 1
    pg.shot(tmp_path / "explorer-unverified.png")
    assert not pg.errors, pg.errors
