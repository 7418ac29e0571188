"""Issue 10 part 3 on the bundled MetaQA KG, through the real CLI: a typo links to the
intended film and says so; an unknown bracketed entity is one line naming it, exit 1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from kgreason.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("cache"))  # the bundled store is built once here


@pytest.fixture
def env(monkeypatch, tmp_path, cache: str) -> Iterator[None]:
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "KGREASON_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    monkeypatch.setenv("KGREASON_CACHE_DIR", cache)
    monkeypatch.chdir(tmp_path)
    yield


def test_typo_links_to_the_intended_film_and_says_so(env) -> None:
    r = runner.invoke(app, ["ask", "who directed Once Were Warrior"])
    assert r.exit_code == 0, r.stderr
    assert 'linked "Once Were Warrior" -> "Once Were Warriors" (0.97, fuzzy)' in r.stdout
    assert "Lee Tamahori" in r.stdout
    r = runner.invoke(app, ["ask", "who directed Once Were Warrior", "--json"])
    out = json.loads(r.stdout)
    # the bundled ranker masks the fuzzily linked mention as it masks a [bracketed] one
    assert [a["name"] for a in out["answers"]] == ["Lee Tamahori"]
    topics = out["topic_entities"]
    assert [(t["id"], t["method"]) for t in topics] == [("Once Were Warriors", "fuzzy")]


def test_unknown_bracketed_entity_is_one_line_naming_it(env) -> None:
    r = runner.invoke(app, ["ask", "who directed [Zorblax the Unfilmable]"])
    assert r.exit_code == 1 and r.stdout == ""
    assert (
        r.stderr.strip().splitlines() == [r.stderr.strip()]
        and 'unknown entity "Zorblax the Unfilmable"' in r.stderr
    )
    # a near miss gets suggestions
    r = runner.invoke(app, ["ask", "who directed [Once Were Warriorz of Doom]"])
    assert r.exit_code == 1 and r.stdout == "" and "did you mean: Once Were Warriors" in r.stderr
