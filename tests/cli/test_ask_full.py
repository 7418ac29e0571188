"""`kgreason ask --json` shows the first members of large sets with their counts; `--full`
shows every member and triple, in the same order."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kgreason.cli import app

runner = CliRunner()
Q = "which movies are in [English]"


@pytest.fixture(autouse=True)
def env(monkeypatch, tmp_path):
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "KGREASON_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    monkeypatch.setenv("KGREASON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def _hops(argv: list[str]) -> list[dict]:
    r = runner.invoke(app, ["ask", "--json", *argv, Q])
    assert r.exit_code == 0, r.stderr
    return [h for p in json.loads(r.stdout)["paths"] for h in p["hops"]]


def test_full_shows_every_member_where_the_default_shows_the_first_and_the_count():
    cut, whole = _hops([]), _hops(["--full"])
    assert len(cut) == len(whole)
    big = [(c, w) for c, w in zip(cut, whole, strict=True) if c["dst_total"] is not None]
    assert big, "the English films (443) should be cut at 50 by default"
    for c, w in big:
        assert len(c["dst"]) == 50 and c["dst_total"] == len(w["dst"]) > 50
        assert w["dst"][:50] == c["dst"] and w["dst_total"] is None
        assert c["triples_total"] == len(w["triples"]) and w["triples_total"] is None
        assert w["triples"][: len(c["triples"])] == c["triples"]


def test_text_output_counts_a_cut_set_in_full():
    r = runner.invoke(app, ["ask", Q])
    assert r.exit_code == 0, r.stderr
    # 443 films, of which a rendered set names 8: the count is the full set's, not the 50
    # the result holds
    assert "(+435 more)" in r.stdout and "(+42 more)" not in r.stdout
