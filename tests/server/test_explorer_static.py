"""The explorer's files as shipped (no browser): offline, accessible markup, vendored
cytoscape.js as its provenance says, no HTML built from strings."""

from __future__ import annotations

import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import kgreason.server

STATIC = Path(kgreason.server.__file__).parent / "static"
EXPLORER = STATIC / "explorer"
VENDOR = STATIC / "vendor" / "cytoscape"
SVG_NS = "http://www.w3.org/2000/svg"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags() -> list[tuple[str, dict[str, str | None]]]:
    p = _Tags()
    p.feed((EXPLORER / "index.html").read_text(encoding="utf-8"))
    return p.tags


def test_ids_are_unique_and_every_label_names_a_control() -> None:
    tags = _tags()
    ids = [a["id"] for _, a in tags if a.get("id")]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    controls = {a["id"] for t, a in tags if t in ("input", "select", "textarea") and a.get("id")}
    fors = {a["for"] for t, a in tags if t == "label" and a.get("for")}
    assert fors <= controls, fors - controls
    # every text control is labelled (by <label for> or by being inside a <label>)
    unlabelled = [
        a["id"]
        for t, a in tags
        if t in ("select", "textarea") or (t == "input" and a.get("type") in ("text", "password"))
        if a.get("id") not in fors
    ]
    assert not unlabelled, unlabelled


def test_nothing_is_fetched_from_elsewhere() -> None:
    """No CDN, no web font, no absolute URL in the page, its scripts or its styles."""
    for f in sorted(EXPLORER.iterdir()):
        text = f.read_text(encoding="utf-8").replace(SVG_NS, "")  # a name, not a fetch
        assert not re.search(r"https?://", text), f.name
        assert "@import" not in text and "@font-face" not in text, f.name
    srcs = [a.get("src") or a.get("href") or "" for t, a in _tags() if t in ("script", "link")]
    assert all(s.startswith(("/static/", "data:")) for s in srcs), srcs


def test_no_markup_is_built_from_strings() -> None:
    """Entity names come from user KGs: the page only sets textContent and attributes."""
    for f in sorted(EXPLORER.glob("*.js")):
        text = f.read_text(encoding="utf-8")
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in text, f"{f.name} uses {sink}"


def test_vendored_cytoscape_matches_its_provenance() -> None:
    prov = (VENDOR / "PROVENANCE.md").read_text(encoding="utf-8")
    digest = hashlib.sha256((VENDOR / "cytoscape.min.js").read_bytes()).hexdigest()
    assert f"sha256 `{digest}`" in prov
    assert "MIT" in (VENDOR / "LICENSE").read_text(encoding="utf-8")
    version = re.search(r"`cytoscape` (\d+\.\d+\.\d+)", prov)
    assert version and f"cytoscape-{version.group(1)}.tgz" in prov
