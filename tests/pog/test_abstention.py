"""The LLM-free mode abstains when its top path does not answer what was asked (issue 37
item 4): "what is the capital of France" on the movie KG links [france] (a tag) and would
answer 35 films; now `answers` is empty, `abstained` is true and the films are candidates,
in the API and the CLI (text and JSON); tests/server/test_abstention_service.py: the HTTP
service and the MCP tool."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import kgreason
from kgreason.cli import app
from kgreason.embed import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.pog.ranker.align import path_alignment, unit

OUT_OF_KG = "what is the capital of France"
ANSWERABLE = "who directed [Once Were Warriors]"
runner = CliRunner()


@pytest.fixture(scope="module")
def pog():
    with kgreason.PoG.from_settings() as p:
        yield p


def test_an_out_of_kg_question_abstains_and_keeps_its_candidates(pog):
    r = pog.ask(OUT_OF_KG)
    assert r.ok and r.abstained and r.answers == []
    assert len(r.candidates) > 5  # the films tagged france, as candidates only
    rank = next(t for t in r.trace if t.get("stage") == "ranker")
    assert rank["alignment"] < rank["abstain_below"] and "no confident answer" in rank["note"]
    assert r.to_dict()["abstained"] is True


def test_an_answerable_question_still_answers(pog):
    r = pog.ask(ANSWERABLE)
    assert not r.abstained and [a.name for a in r.answers] == ["Lee Tamahori"]
    rank = next(t for t in r.trace if t.get("stage") == "ranker")
    assert rank["alignment"] > 0.5


def test_threshold_zero_never_abstains():
    s = kgreason.Settings()
    s.pog.llm_free_abstain_below = 0.0
    with kgreason.PoG.from_settings(s) as p:
        r = p.ask(OUT_OF_KG)
    assert not r.abstained and r.answers


def test_alignment_pairs_words_with_hops_one_to_one():
    emb = build_embedder(EmbedSettings(backend="static"))

    def vectors(texts):
        return unit(emb.embed(texts))

    q = "what is the nationality of [X] 's spouse"
    two = path_alignment(q, ["X"], [("spouse", True), ("nationality", True)], vectors)
    one = path_alignment(q, ["X"], [("spouse", True)], vectors)
    echo = [("spouse", True), ("nationality", True), ("nationality", False)]
    three = path_alignment(q, ["X"], echo, vectors)
    assert two is not None and one is not None and three is not None
    assert two > one and two > three and np.isclose(two, 1.0, atol=1e-4)
    assert path_alignment("[X]", ["X"], [("spouse", True)], vectors) == 0.0  # no content word
    # opaque relation ids (Wikidata's P57, a KG's p1): no signal, so never an abstention
    assert path_alignment(q, ["X"], [("P57", True)], vectors) is None
    assert path_alignment(q, ["X"], [("spouse", True), ("p1", True)], vectors) is None


def test_cli_says_no_confident_answer_and_json_says_abstained(monkeypatch):
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "KGREASON_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    r = runner.invoke(app, ["ask", OUT_OF_KG])
    assert r.exit_code == 0, r.output
    assert "no confident answer" in r.stdout and "Candidates" in r.stdout
    j = runner.invoke(app, ["--json", "ask", OUT_OF_KG])
    d = json.loads(j.stdout)
    assert d["answers"] == [] and d["abstained"] is True and d["candidates"]
