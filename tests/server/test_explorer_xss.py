"""The web explorer shows entity names as text, never as HTML: headless Chromium against
`kgreason serve --kg` over a tiny user KG whose entity names are HTML and script (helpers in
tests/server/browser.py). Skips when /usr/bin/chromium or playwright is missing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.browser import EVIL, EVIL_SCRIPT, Page, _js_str, _start, browser, evil_kg

__all__ = ["browser"]  # the module-scoped fixture


@pytest.fixture(scope="module")
def evil_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`kgreason serve --kg` over a user KG whose entity names are HTML and script."""
    tmp = tmp_path_factory.mktemp("evil")
    evil_kg(tmp)
    yield from _start(tmp, tmp / "kg")


def test_entity_names_are_shown_as_text_never_as_html(
    browser: Any, evil_server: str, tmp_path: Path
) -> None:
    pg = Page(browser, evil_server)
    result = pg.ask("who directed [Evil Film]")
    assert result["paths"], result.get("error")
    shown = pg.text("#answer") + pg.text("#paths") + pg.text("#triples")
    assert EVIL in shown and EVIL_SCRIPT in shown
    # nothing was parsed as markup: no <img>, no <script> ran, no alert
    assert pg.js("document.querySelectorAll('img').length") == 0
    assert pg.js("document.querySelectorAll('body script').length") == 0
    assert pg.js("window.__pwned === undefined")
    assert pg.js(f"window.kgExplorer.cy.nodes().some(n => n.data('label') === {_js_str(EVIL)})")
    # expanding the entity named like a tag goes through the entity endpoint, as text
    pg.click_entity(EVIL)
    pg.page.wait_for_function(
        "document.getElementById('graph-hint').textContent.includes('neighbours shown')",
        timeout=30_000,
    )
    assert pg.text("#graph-hint").startswith(f"{EVIL}: ")
    assert pg.js("document.querySelectorAll('img').length") == 0
    pg.shot(tmp_path / "explorer-xss.png")
    assert pg.dialogs == [] and pg.js("window.__pwned === undefined")
    assert not pg.errors, pg.errors
